import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@libsql/client";
import { eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { notifications } from "../../db/schema/webhooks.ts";
import { createTestDb } from "../../db/test-db.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { insertEventHistory, type HistoryInput } from "../testing/event-history.ts";
import { createTestApp } from "../testing/harness.ts";
import { createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { BATCHES_PER_RUN, EVENTS_PER_BATCH, purgeHistory, TOKENS_PER_RUN } from "./purge-history.ts";

const TENANT = "00000000-0000-4000-8000-00000000000a";
const ENDPOINT = "00000000-0000-4000-8000-0000000000e1";
const WALLET = "00000000-0000-4000-8000-0000000000f1";
const USER = "00000000-0000-4000-8000-0000000000c1";
const NOW = Date.UTC(2030, 0, 1);
const RETENTION_DAYS = 90;
const OLD = NOW - 200 * DAY_MS;
const RECENT = NOW - 10 * DAY_MS;

/** A migrated database with foreign keys enforced, as D1 does, a tenant, its endpoint, a wallet and a user. */
async function historyDb(): Promise<{ client: Client; db: Db; close(): void }> {
  const t = await createTestDb();
  await t.client.execute("PRAGMA foreign_keys = ON");
  expect(await count(t.client, "PRAGMA foreign_keys")).toBe(1);
  await t.client.batch(
    [
      { sql: "INSERT INTO tenants (id, name, created_at) VALUES (?, 'a', 0)", args: [TENANT] },
      {
        sql: "INSERT INTO webhook_endpoints (id, tenant_id, url, events, mode, secret_ciphertext, secret_prefix, created_at) VALUES (?, ?, 'https://example.com/hook', '[\"*\"]', 'sandbox', 'x', 'whsec', 0)",
        args: [ENDPOINT, TENANT],
      },
      {
        sql: "INSERT INTO wallets (id, tenant_id, chain, role, address, created_at, updated_at) VALUES (?, ?, 'BASE_SEPOLIA', 'FUNDING', '0xabc', 0, 0)",
        args: [WALLET, TENANT],
      },
      {
        sql: "INSERT INTO users (id, tenant_id, email, role, password_hash, password_salt, password_iterations, created_at) VALUES (?, ?, 'owner@example.com', 'OWNER', 'h', 's', 1, 0)",
        args: [USER, TENANT],
      },
    ],
    "write",
  );
  return t;
}

/** Adds `count` events after those already there (seq continues). */
function adder(client: Client) {
  let seq = 1;
  return async (h: Omit<HistoryInput, "firstSeq" | "tenantIds">) => {
    await insertEventHistory(client, { tenantIds: [TENANT], endpointId: ENDPOINT, emailStatus: "SENT", ...h, firstSeq: seq });
    seq += h.count;
  };
}

async function count(client: Client, sql: string, args: (string | number)[] = []): Promise<number> {
  const rs = await client.execute({ sql, args });
  return Number(rs.rows[0]![0]);
}

const idsOf = async (client: Client, prefix: string) =>
  (await client.execute({ sql: "SELECT id FROM events WHERE id LIKE ? ORDER BY seq", args: [`${prefix}%`] })).rows.map((r) => String(r.id));

describe("the retention pass", () => {
  test("removes relayed history older than the period, with its notifications, deliveries and attempts; keeps what is still needed", async () => {
    const { client, db, close } = await historyDb();
    const add = adder(client);
    await add({ prefix: "old-ok-", count: 5, at: OLD, relayed: true, deliveryStatus: "SUCCEEDED" });
    await add({ prefix: "old-failed-", count: 2, at: OLD, relayed: true, deliveryStatus: "FAILED", emailStatus: "SKIPPED" });
    // Still needed, however old:
    await add({ prefix: "unrelayed-", count: 2, at: OLD, relayed: false, endpointId: undefined, emailStatus: undefined });
    await add({ prefix: "retrying-", count: 2, at: OLD, relayed: true, deliveryStatus: "PENDING" });
    await add({ prefix: "mail-pending-", count: 1, at: OLD, relayed: true, emailStatus: "PENDING" });
    await add({ prefix: "redelivered-", count: 1, at: OLD, relayed: true, deliveryStatus: "SUCCEEDED" });
    await client.execute({ sql: "UPDATE webhook_deliveries SET updated_at = ? WHERE event_id LIKE 'redelivered-%'", args: [RECENT] });
    // Within the period:
    await add({ prefix: "recent-", count: 3, at: RECENT, relayed: true });
    // Expired challenges and verification links: long ago, and within the period.
    await client.batch(
      [
        {
          sql: "INSERT INTO wallet_challenges (id, tenant_id, wallet_id, message, expires_at, created_at) VALUES ('wc-old', ?, ?, 'm', ?, ?)",
          args: [TENANT, WALLET, OLD, OLD],
        },
        {
          sql: "INSERT INTO wallet_challenges (id, tenant_id, wallet_id, message, expires_at, created_at) VALUES ('wc-new', ?, ?, 'm', ?, ?)",
          args: [TENANT, WALLET, RECENT, RECENT],
        },
        {
          sql: "INSERT INTO email_verifications (id, user_id, email, token_hash, expires_at, used_at, created_at) VALUES ('ev-old', ?, 'e', 'h1', ?, ?, ?)",
          args: [USER, OLD, OLD, OLD],
        },
        {
          sql: "INSERT INTO email_verifications (id, user_id, email, token_hash, expires_at, created_at) VALUES ('ev-new', ?, 'e', 'h2', ?, ?)",
          args: [USER, RECENT, RECENT],
        },
        {
          sql: "INSERT INTO email_releases (id, email, user_id, token_hash, expires_at, used_at, created_at) VALUES ('er-old', 'e', ?, 'h1', ?, ?, ?)",
          args: [USER, OLD, OLD, OLD],
        },
        {
          sql: "INSERT INTO email_releases (id, email, user_id, token_hash, expires_at, created_at) VALUES ('er-new', 'e', ?, 'h2', ?, ?)",
          args: [USER, RECENT, RECENT],
        },
      ],
      "write",
    );

    const report = await purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS });
    expect(report).toEqual({ events: 7, notifications: 7, deliveries: 7, attempts: 7, walletChallenges: 1, emailVerifications: 1, emailReleases: 1 });
    expect(await idsOf(client, "old-")).toEqual([]);
    for (const table of ["webhook_deliveries", "notifications"])
      expect(await count(client, `SELECT COUNT(*) FROM ${table} WHERE event_id LIKE 'old-%'`)).toBe(0);
    expect(await count(client, "SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id LIKE 'd-old-%'")).toBe(0);
    expect(await idsOf(client, "unrelayed-")).toHaveLength(2);
    expect(await idsOf(client, "retrying-")).toHaveLength(2);
    expect(await count(client, "SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id LIKE 'd-retrying-%'")).toBe(2);
    expect(await idsOf(client, "mail-pending-")).toHaveLength(1);
    expect(await idsOf(client, "redelivered-")).toHaveLength(1);
    expect(await idsOf(client, "recent-")).toHaveLength(3);
    expect(await count(client, "SELECT COUNT(*) FROM wallet_challenges WHERE id = 'wc-new'")).toBe(1);
    expect(await count(client, "SELECT COUNT(*) FROM email_verifications WHERE id = 'ev-new'")).toBe(1);
    expect(await count(client, "SELECT COUNT(*) FROM wallet_challenges")).toBe(1);
    expect(await count(client, "SELECT COUNT(*) FROM email_verifications")).toBe(1);
    expect(await count(client, "SELECT COUNT(*) FROM email_releases WHERE id = 'er-new'")).toBe(1);

    // Once the retries and the e-mail finish, their events go on the next run.
    await client.execute("UPDATE webhook_deliveries SET status = 'FAILED' WHERE event_id LIKE 'retrying-%'");
    await client.execute("UPDATE notifications SET email_status = 'SENT' WHERE event_id LIKE 'mail-pending-%'");
    expect(await purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS })).toMatchObject({ events: 3, attempts: 3 });
    close();
  });

  test("never removes the newest event, whose seq the next event counts from", async () => {
    const { client, db, close } = await historyDb();
    const add = adder(client);
    await add({ prefix: "old-", count: 3, at: OLD, relayed: true });
    expect((await purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS })).events).toBe(2);
    expect(await idsOf(client, "old-")).toEqual(["old-2"]);
    close();
  });

  test("one run removes at most its page cap; the backlog goes over the next runs", async () => {
    const { client, db, close } = await historyDb();
    const add = adder(client);
    await add({ prefix: "old-", count: 50, at: OLD, relayed: true });
    const run = () => purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS, eventsPerBatch: 10, batchesPerRun: 2, tokensPerRun: 5 });
    expect(await run()).toMatchObject({ events: 20, notifications: 20, deliveries: 20, attempts: 20 });
    // Oldest relay first, and in outbox order.
    expect((await idsOf(client, "old-"))[0]).toBe("old-20");
    expect((await run()).events).toBe(20);
    expect((await run()).events).toBe(9); // the newest stays
    expect((await run()).events).toBe(0);
    close();
  });

  test(`with the production caps: ${EVENTS_PER_BATCH} events a batch, ${BATCHES_PER_RUN} batches and ${TOKENS_PER_RUN} challenges and links a run`, async () => {
    const { client, db, close } = await historyDb();
    const add = adder(client);
    const perRun = EVENTS_PER_BATCH * BATCHES_PER_RUN;
    await add({ prefix: "old-", count: perRun + 100, at: OLD, relayed: true });
    await client.execute({
      sql: `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
            INSERT INTO wallet_challenges (id, tenant_id, wallet_id, message, expires_at, created_at) SELECT 'wc-' || i, ?, ?, 'm', ?, ? FROM n`,
      args: [TOKENS_PER_RUN + 7, TENANT, WALLET, OLD, OLD],
    });
    const first = await purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS });
    expect(first).toEqual({
      events: perRun,
      notifications: perRun,
      deliveries: perRun,
      attempts: perRun,
      walletChallenges: TOKENS_PER_RUN,
      emailVerifications: 0,
      emailReleases: 0,
    });
    const second = await purgeHistory({ db }, { now: new Date(NOW), retentionDays: RETENTION_DAYS });
    expect(second).toMatchObject({ events: 99, walletChallenges: 7 });
    close();
  });
});

describe("a loan's history", () => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("an open loan's events stay whatever their age (ACTIVE, DEFAULTED); once it is repaid they go (but the newest event)", async () => {
    const owner = await sandboxTenant(t);
    const loan = await createdLoan(t, owner.key);
    // The e-mail worker has sent the owner's e-mails (the Bun tier only queues them).
    await t.db.update(notifications).set({ emailStatus: "SENT", emailNextAttemptAt: null }).where(eq(notifications.tenantId, owner.tenantId));
    const loanEvents = async () => (await t.db.select({ id: events.id }).from(events).where(eq(events.loanId, loan.id))).length;
    const before = await loanEvents();
    expect(before).toBeGreaterThanOrEqual(3);
    const later = new Date(t.clock.now().getTime() + 100 * DAY_MS);

    expect(loan.status).toBe("ACTIVE");
    const first = await purgeHistory({ db: t.db }, { now: later, retentionDays: RETENTION_DAYS });
    expect(await loanEvents()).toBe(before);
    // The signup's verification link (used) expired long before `later`.
    expect(first.emailVerifications).toBe(1);
    const events1 = await t.request("GET", `/v1/events?loanId=${loan.id}`, { headers: { "x-api-key": owner.key } });
    expect(events1.body.data).toHaveLength(before);
    await t.db.update(loans).set({ status: "DEFAULTED" }).where(eq(loans.id, loan.id));
    expect((await purgeHistory({ db: t.db }, { now: later, retentionDays: RETENTION_DAYS })).events).toBe(0);
    expect(await loanEvents()).toBe(before);

    await t.db.update(loans).set({ status: "REPAID" }).where(eq(loans.id, loan.id));
    const report = await purgeHistory({ db: t.db }, { now: later, retentionDays: RETENTION_DAYS });
    expect(report.events).toBeGreaterThanOrEqual(before - 1);
    expect(await loanEvents()).toBeLessThanOrEqual(1);
    // The loan itself, its agreement and settlements are not history to purge.
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": owner.key } })).status).toBe(200);
  });
});
