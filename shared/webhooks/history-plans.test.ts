import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@libsql/client";
import type { Db } from "../../db/create-db.ts";
import { createTestDb } from "../../db/test-db.ts";
import { expiredEventIds, purgeEventsStatements } from "../retention/purge-history.ts";
import { insertEventHistory, insertTenantsWithEndpoint } from "../testing/event-history.ts";
import { requeueDeliveriesQuery, requeueMailsQuery } from "./stalled-deliveries.ts";
import { memoryDeliveryQueue, sentItems } from "./memory-queue.ts";
import { claimedDeliveriesQuery, claimedMailsQuery, relayOutbox, relayPageQueries, unrelayedEventsQuery } from "./relay-outbox.ts";

/**
 * Issue 17 "Scans that grow with history": under 100,000 relayed events (each
 * with a SUCCEEDED delivery, its attempt and a SENT e-mail), the relay's and
 * the recovery pass's reads go through indexes whose range holds only the
 * work waiting. The SQL is the production builders' own (`toSQL()`), so the
 * plans cannot drift from the code.
 */
const HISTORY = 100_000;
const A = "00000000-0000-4000-8000-00000000000a";
const B = "00000000-0000-4000-8000-00000000000b";
const ENDPOINT = "00000000-0000-4000-8000-0000000000e1";
const NOW = Date.UTC(2030, 0, 1);

let client: Client;
let db: Db;
let close: () => void;

beforeAll(async () => {
  ({ client, db, close } = await createTestDb());
  await insertTenantsWithEndpoint(client, { tenantIds: [A, B], endpointId: ENDPOINT });
  const old = NOW - 365 * 86_400_000;
  await insertEventHistory(client, {
    prefix: "old-",
    firstSeq: 1,
    count: HISTORY,
    tenantIds: [A, B],
    at: old,
    relayed: true,
    endpointId: ENDPOINT,
    deliveryStatus: "SUCCEEDED",
    emailStatus: "SENT",
  });
  // The work waiting: a few unrelayed events, a stalled delivery and a stalled e-mail.
  await insertEventHistory(client, { prefix: "new-", firstSeq: HISTORY + 1, count: 3, tenantIds: [A], at: NOW, relayed: false });
  await insertEventHistory(client, {
    prefix: "stalled-",
    firstSeq: HISTORY + 4,
    count: 1,
    tenantIds: [A],
    at: NOW - 60_000,
    relayed: true,
    endpointId: ENDPOINT,
    deliveryStatus: "PENDING",
    emailStatus: "PENDING",
  });
});
afterAll(() => close());

/** EXPLAIN QUERY PLAN of a drizzle query, its details joined by lines. */
async function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string> {
  const { sql, params } = query.toSQL();
  const plan = await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never[] });
  return plan.rows.map((r) => String(r.detail)).join("\n");
}

const queries = () => {
  const cutoff = new Date(NOW - 15_000);
  return {
    cronRelay: unrelayedEventsQuery(db),
    apiRelay: unrelayedEventsQuery(db, A),
    cronRelayEndpoints: relayPageQueries(db)[1],
    cronRelayOwners: relayPageQueries(db)[2],
    claimedDeliveries: claimedDeliveriesQuery(db, ["new-0", "new-1"]),
    claimedMails: claimedMailsQuery(db, ["new-0", "new-1"]),
    requeueDeliveries: requeueDeliveriesQuery(db, new Date(NOW), cutoff),
    requeueMails: requeueMailsQuery(db, new Date(NOW), cutoff),
  };
};

function expectIndexedPlans(plans: Record<keyof ReturnType<typeof queries>, string>) {
  // The cron relay: the NULL end of (relayed_at, seq), already in outbox order.
  expect(plans.cronRelay).toMatch(/SEARCH events USING INDEX events_unrelayed_idx \(relayed_at=\?\)/);
  // The api's relay after a write: the partial index of that tenant's unrelayed events.
  expect(plans.apiRelay).toMatch(/SEARCH events USING INDEX events_unrelayed_tenant_idx \(tenant_id=\?\)/);
  // The cron relay's endpoints and owners: of the page's tenants, read through the same index.
  expect(plans.cronRelayEndpoints).toMatch(/SEARCH events USING (COVERING )?INDEX events_unrelayed_idx \(relayed_at=\?\)/);
  expect(plans.cronRelayOwners).toMatch(/SEARCH events USING (COVERING )?INDEX events_unrelayed_idx \(relayed_at=\?\)/);
  expect(plans.claimedDeliveries).toMatch(/SEARCH webhook_deliveries USING INDEX webhook_deliveries_event_idx \(event_id=\?\)/);
  expect(plans.claimedMails).toMatch(/SEARCH notifications USING INDEX sqlite_autoindex_notifications_\d \(event_id=\?\)/);
  // The recovery pass: partial indexes of PENDING rows only.
  expect(plans.requeueDeliveries).toMatch(/SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_pending_idx \(next_attempt_at<\?\)/);
  expect(plans.requeueMails).toMatch(/SEARCH notifications USING (COVERING )?INDEX notifications_email_pending_idx \(email_next_attempt_at<\?\)/);
  for (const [name, plan] of Object.entries(plans)) {
    expect(plan).not.toMatch(/\bSCAN (events|webhook_deliveries|notifications)\b/);
    // Outbox order comes from the index, never from sorting the rows read (the owners'
    // read sorts its page's tenants' owners, a few users rows, oldest first).
    if (name !== "cronRelayOwners") expect(plan).not.toContain("USE TEMP B-TREE");
  }
}

async function allPlans() {
  const q = queries();
  return {
    cronRelay: await planOf(q.cronRelay),
    apiRelay: await planOf(q.apiRelay),
    cronRelayEndpoints: await planOf(q.cronRelayEndpoints),
    cronRelayOwners: await planOf(q.cronRelayOwners),
    claimedDeliveries: await planOf(q.claimedDeliveries),
    claimedMails: await planOf(q.claimedMails),
    requeueDeliveries: await planOf(q.requeueDeliveries),
    requeueMails: await planOf(q.requeueMails),
  };
}

describe(`under ${HISTORY.toLocaleString("en")} relayed events`, () => {
  // First: libSQL leaves an EXPLAIN of an UPDATE … RETURNING open, which would then block the
  // commit of the relay's batch (a quirk of the test driver, not of D1). Plans do not depend on
  // which rows are there until ANALYZE, and ANALYZE then sees no unrelayed event at all.
  test("the relay takes the waiting events and nothing of the history", async () => {
    const queue = memoryDeliveryQueue();
    // The 3 events' first attempts in one `deliveries` message.
    expect(await relayOutbox({ db, queue }, { now: new Date(NOW), tenantId: A })).toEqual({ events: 3, messages: 1 });
    expect(sentItems(queue.messages).map((m) => m.body.kind)).toEqual(["delivery", "delivery", "delivery"]);
    expect(await relayOutbox({ db, queue }, { now: new Date(NOW) })).toEqual({ events: 0, messages: 0 });
  });
  test("the relay and the recovery pass read through indexes of the waiting work, never a table scan", async () => {
    expectIndexedPlans(await allPlans());
  });

  test("and the same once the planner has statistics (ANALYZE, as PRAGMA optimize gives D1)", async () => {
    await client.execute("ANALYZE");
    expectIndexedPlans(await allPlans());
  });

  test("the retention job finds old events by relay time, checks each one by key, and deletes by key", async () => {
    const plan = await planOf(expiredEventIds(db, new Date(NOW), 500));
    expect(plan).toMatch(
      /SEARCH events USING INDEX events_unrelayed_idx \(relayed_at>\? AND relayed_at<\?\)|SEARCH events USING INDEX events_unrelayed_idx \(relayed_at<\?\)/,
    );
    expect(plan).toMatch(/SEARCH webhook_deliveries USING INDEX webhook_deliveries_event_idx \(event_id=\?\)/);
    expect(plan).toMatch(/SEARCH notifications USING INDEX sqlite_autoindex_notifications_\d \(event_id=\?\)/);
    expect(plan).toMatch(/SEARCH loans USING INDEX sqlite_autoindex_loans_1 \(id=\?\)/);
    expect(plan).not.toMatch(/\bSCAN (events|webhook_deliveries|notifications|loans)\b/);
    const [attempts, deliveries, notes, gone] = await Promise.all(purgeEventsStatements(db, new Date(NOW), 500).map(planOf));
    expect(attempts).toMatch(/SEARCH webhook_attempts USING (COVERING )?INDEX webhook_attempts_delivery_attempt_idx \(delivery_id=\?\)/);
    expect(deliveries).toMatch(/SEARCH webhook_deliveries USING INDEX webhook_deliveries_event_idx \(event_id=\?\)/);
    expect(notes).toMatch(/SEARCH notifications USING INDEX sqlite_autoindex_notifications_\d \(event_id=\?\)/);
    expect(gone).toMatch(/SEARCH events USING (COVERING )?INDEX sqlite_autoindex_events_1 \(id=\?\)/);
    for (const p of [attempts, deliveries, notes, gone]) expect(p).not.toMatch(/\bSCAN (events|webhook_deliveries|webhook_attempts|notifications|loans)\b/);
  });
});
