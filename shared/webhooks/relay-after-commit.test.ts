import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, isNull } from "drizzle-orm";
import { events } from "../../db/schema/events.ts";
import { webhookDeliveries } from "../../db/schema/webhooks.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { apiKey, createLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import type { Client } from "@libsql/client";
import type { Db } from "../../db/create-db.ts";
import { createTestDb } from "../../db/test-db.ts";
import { insertEventHistory, insertTenantsWithEndpoint } from "../testing/event-history.ts";
import { memoryDeliveryQueue, sentItems } from "./memory-queue.ts";
import type { DeliveryMessage } from "./messages.ts";
import { coalescedPasses, MAX_PASSES, PASS_PAGES, relayAfterCommit, relayAfterRequest } from "./relay-after-commit.ts";
import { RELAY_PAGE } from "./relay-outbox.ts";

/** A pass that waits until the test lets it end. */
function controlledPasses() {
  const started: { end: (err?: Error) => void }[] = [];
  const pass = () =>
    new Promise<void>((resolve, reject) => {
      started.push({ end: (err) => (err ? reject(err) : resolve()) });
    });
  return { started, pass };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("coalescedPasses: one caller runs the passes, the others join it", () => {
  test("calls during a pass return at once, and one more pass runs after it for all of them", async () => {
    const scope = {};
    const { started, pass } = controlledPasses();
    const first = coalescedPasses(scope, "tenant", pass);
    await tick();
    expect(started).toHaveLength(1);
    // Three writes commit while the first pass runs: they are done at once, and start nothing.
    await Promise.all([coalescedPasses(scope, "tenant", pass), coalescedPasses(scope, "tenant", pass), coalescedPasses(scope, "tenant", pass)]);
    expect(started).toHaveLength(1);
    started[0]!.end();
    await tick();
    // The first pass may have missed their events: one more pass, which starts after their commits.
    expect(started).toHaveLength(2);
    started[1]!.end();
    await first;
    expect(started).toHaveLength(2);
  });

  test("with no call during its pass, the caller runs exactly one; the next call starts a run of its own", async () => {
    const scope = {};
    const { started, pass } = controlledPasses();
    const first = coalescedPasses(scope, "tenant", pass);
    await tick();
    started[0]!.end();
    await first;
    expect(started).toHaveLength(1);
    const second = coalescedPasses(scope, "tenant", pass);
    await tick();
    expect(started).toHaveLength(2);
    started[1]!.end();
    await second;
  });

  test("other tenants, and other databases, run their own passes at the same time", async () => {
    const scope = {};
    const { started, pass } = controlledPasses();
    const runs = [coalescedPasses(scope, "a", pass), coalescedPasses(scope, "b", pass), coalescedPasses({}, "a", pass)];
    await tick();
    expect(started).toHaveLength(3);
    for (const s of started) s.end();
    await Promise.all(runs);
  });

  test(`under a steady stream of writes, one caller runs at most ${MAX_PASSES} passes; then the next write takes over`, async () => {
    const scope = {};
    const { started, pass } = controlledPasses();
    const first = coalescedPasses(scope, "tenant", pass);
    for (let n = 0; n < MAX_PASSES; n++) {
      await tick();
      expect(started).toHaveLength(n + 1);
      await coalescedPasses(scope, "tenant", pass); // a write during every pass
      started[n]!.end();
    }
    await first;
    expect(started).toHaveLength(MAX_PASSES);
    const next = coalescedPasses(scope, "tenant", pass);
    await tick();
    expect(started).toHaveLength(MAX_PASSES + 1);
    started[MAX_PASSES]!.end();
    await next;
  });

  test(`a pass that stopped at its page cap (a backlog) runs again with no write joining, ${MAX_PASSES} passes at most`, async () => {
    const scope = {};
    let passes = 0;
    // Every pass reports more: the backlog outlasts the run.
    await coalescedPasses(scope, "tenant", async () => {
      passes++;
      return true;
    });
    expect(passes).toBe(MAX_PASSES);
    // A pass that drained the backlog ends the run.
    passes = 0;
    await coalescedPasses(scope, "tenant", async () => ++passes < 2);
    expect(passes).toBe(2);
  });

  test("a failed pass ends the run with its error, and the next write runs a pass again", async () => {
    const scope = {};
    const { started, pass } = controlledPasses();
    const first = coalescedPasses(scope, "tenant", pass);
    await tick();
    await coalescedPasses(scope, "tenant", pass);
    started[0]!.end(new Error("D1_ERROR: overloaded"));
    await expect(first).rejects.toThrow("overloaded");
    expect(started).toHaveLength(1);
    const next = coalescedPasses(scope, "tenant", pass);
    await tick();
    expect(started).toHaveLength(2);
    started[1]!.end();
    await next;
  });
});

describe("relay after concurrent writes (the api, libSQL)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("eight loans created at once: every event relayed, each delivery messaged exactly once, and no write costs more than one relay read", async () => {
    const m = await sandboxTenant(t);
    const hook = await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/svc", events: ["*"] }, headers: apiKey(m.key) });
    expect(hook.status).toBe(201);
    const queue = t.deps.queue as unknown as { messages: { body: DeliveryMessage }[] };
    queue.messages.length = 0;

    // Count the relay's first read (the tenant's unrelayed page, in the batch of the page's reads): once per page of a pass.
    const batch = t.client.batch.bind(t.client);
    let relayReads = 0;
    const sqlOf = (stmt: string | { sql: string }) => (typeof stmt === "string" ? stmt : stmt.sql);
    t.client.batch = ((stmts: (string | { sql: string })[], mode?: never) => {
      if (stmts.some((s) => /from "events" where \("events"\."relayed_at" is null and "events"\."tenant_id" = \?\)/.test(sqlOf(s)))) relayReads++;
      return batch(stmts as never, mode);
    }) as typeof t.client.batch;
    try {
      const created = await Promise.all(Array.from({ length: 8 }, () => createLoan(t, m.key)));
      expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
    } finally {
      t.client.batch = batch;
    }

    expect(
      await t.db
        .select({ id: events.id })
        .from(events)
        .where(and(eq(events.tenantId, m.tenantId), isNull(events.relayedAt))),
    ).toEqual([]);
    const deliveries = await t.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, m.tenantId));
    // Submitted, approved, funded: three events per loan, one delivery each to the "*" endpoint.
    expect(deliveries).toHaveLength(24);
    const messaged = sentItems(queue.messages)
      .filter((q) => q.body.kind === "delivery")
      .map((q) => (q.body as { deliveryId: string }).deliveryId);
    expect([...messaged].sort()).toEqual(deliveries.map((d) => d.id).sort());
    // Joined writes start no pass of their own; the one that relays runs one more for them.
    expect(relayReads).toBeGreaterThan(0);
    expect(relayReads).toBeLessThanOrEqual(8);
  });
});

describe("relay after a write with a backlog (libSQL)", () => {
  const A = "00000000-0000-4000-8000-0000000000aa";
  const ENDPOINT = "00000000-0000-4000-8000-0000000000e2";
  let client: Client;
  let db: Db;
  let close: () => void;
  beforeAll(async () => {
    ({ client, db, close } = await createTestDb());
    await insertTenantsWithEndpoint(client, { tenantIds: [A], endpointId: ENDPOINT });
  });
  afterAll(() => close());

  const unrelayed = async () => (await db.select({ id: events.id }).from(events).where(isNull(events.relayedAt))).length;

  test(`one write's relay takes a backlog of whole pages, pass after pass, up to ${MAX_PASSES * PASS_PAGES * RELAY_PAGE} events; the next write the rest`, async () => {
    const run = MAX_PASSES * PASS_PAGES * RELAY_PAGE;
    await insertEventHistory(client, { prefix: "burst-", firstSeq: 1, count: run + 70, tenantIds: [A], at: 0, relayed: false });
    const queue = memoryDeliveryQueue();
    await relayAfterCommit({ db, queue }, { tenantId: A, now: () => new Date(1_000) });
    expect(await unrelayed()).toBe(70);
    await relayAfterCommit({ db, queue }, { tenantId: A, now: () => new Date(2_000) });
    expect(await unrelayed()).toBe(0);
    // One delivery message per event, each once, in outbox order.
    const messaged = sentItems(queue.messages).filter((m) => m.body.kind === "delivery");
    expect(messaged).toHaveLength(run + 70);
    const deliveries = await db.select({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId }).from(webhookDeliveries);
    expect(new Set(messaged.map((m) => (m.body as { deliveryId: string }).deliveryId))).toEqual(new Set(deliveries.map((d) => d.id)));
  });
});

describe("relayAfterRequest: after the response where there is an execution context, before it where there is none", () => {
  const T = "00000000-0000-4000-8000-0000000000a1";
  const setup = async (prefix: string) => {
    const test = await createTestDb();
    await insertTenantsWithEndpoint(test.client, { tenantIds: [T], endpointId: "00000000-0000-4000-8000-0000000000e1" });
    await insertEventHistory(test.client, { prefix, firstSeq: 1, count: 3, tenantIds: [T], at: 0, relayed: false });
    const logged: { message: string; fields: Record<string, unknown> }[] = [];
    const log = { error: (message: string, fields: Record<string, unknown> = {}) => logged.push({ message, fields }), info: () => {}, warn: () => {} };
    return { ...test, queue: memoryDeliveryQueue(), logged, log: log as never, clock: { now: () => new Date() } };
  };

  test("with waitUntil: the relay is handed to it, once, and runs there", async () => {
    const s = await setup("ctx-");
    const handed: Promise<unknown>[] = [];
    await relayAfterRequest(s, { tenantId: T, executionCtx: () => ({ waitUntil: (p) => handed.push(p) }), failure: "relay failed" });
    expect(handed).toHaveLength(1);
    await handed[0];
    // The 3 events' deliveries to the endpoint (and their notifications, skipped: no owner).
    expect(sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery")).toHaveLength(3);
    s.close();
  });

  test("without an execution context (Hono throws): the relay is done when the call returns", async () => {
    const s = await setup("bare-");
    const noContext = () => {
      throw new Error("This context has no ExecutionContext");
    };
    await relayAfterRequest(s, { tenantId: T, executionCtx: noContext, failure: "relay failed" });
    expect(sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery")).toHaveLength(3);
    s.close();
  });

  test("a relay that fails is logged with the tenant, never thrown at the request", async () => {
    const s = await setup("fail-");
    const broken = { ...s, queue: { send: async () => {}, sendBatch: async () => Promise.reject(new Error("queue down")) } };
    const handed: Promise<unknown>[] = [];
    await relayAfterRequest(broken, { tenantId: T, executionCtx: () => ({ waitUntil: (p) => handed.push(p) }), failure: "relay after write failed" });
    await handed[0];
    expect(s.logged.map((l) => [l.message, l.fields.tenantId, l.fields.error])).toEqual([["relay after write failed", T, "queue down"]]);
    s.close();
  });
});
