import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq, isNull, sql } from "drizzle-orm";
import { events } from "../../db/schema/events.ts";
import { sandboxLedgers } from "../../db/schema/settlement-tracking.ts";
import { LISTENER_PAGE, ledgersToPoll, pollChain } from "../../shared/settlement/listener.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../shared/testing/loan-fixtures.ts";
import { drainOutbox, RELAY_PAGE } from "../../shared/webhooks/relay-outbox.ts";
import { DAY_MS } from "../../shared/domain/pricing.ts";
import { sweepDueLoans } from "../../shared/sweeps/run-sweeps.ts";
import { SWEEP_PAGE } from "../../shared/sweeps/sweep-loans.ts";

const HOUR_MS = 3_600_000;

// The cron's jobs are bounded per run (workers/cron/budget.ts): a run that stops at its cap says so
// (`more`) and leaves the rest to a continuation or the next tick, never dropping it.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("the listener stops at its page cap with the ledger still due, and the next run goes on from its cursor", async () => {
  const m = await sandboxTenant(t);
  const address = `0:${"cd".repeat(32)}`;
  for (let i = 0; i < LISTENER_PAGE + 5; i++) {
    const res = await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "TON_TESTNET", address, amount: "1.00" }, headers: apiKey(m.key) });
    expect(res.status).toBe(200);
  }
  const ledger = and(eq(sandboxLedgers.tenantId, m.tenantId), eq(sandboxLedgers.chain, "TON_TESTNET"));
  const [{ head }] = (await t.db.select({ head: sandboxLedgers.lastBlock }).from(sandboxLedgers).where(ledger)) as [{ head: number }];
  await t.db
    .update(sandboxLedgers)
    .set({ lastBlock: 0, pollAfter: new Date(0) })
    .where(ledger);
  const deps = { db: t.db, chain: t.deps.chain, writer: t.deps.writer, clock: t.clock };
  const due = async () => (await ledgersToPoll(t.db, t.clock.now(), 1000)).some((l) => l.sandboxTenantId === m.tenantId && l.chain === "TON_TESTNET");

  t.clock.advance(1);
  const first = await pollChain(deps, { chain: "TON_TESTNET", sandboxTenantId: m.tenantId, maxPages: 1 });
  expect([first.pages, first.transactions, first.more]).toEqual([1, LISTENER_PAGE, true]);
  expect(await due()).toBe(true);

  t.clock.advance(1);
  const second = await pollChain(deps, { chain: "TON_TESTNET", sandboxTenantId: m.tenantId, maxPages: 1 });
  expect(second.more).toBe(false);
  expect(second.lastBlock).toBe(head);
  expect(first.transactions + second.transactions).toBeGreaterThan(LISTENER_PAGE);
  expect(await due()).toBe(false);
});

test("the relay stops at its page cap and says so; the continuation drains the rest", async () => {
  const m = await sandboxTenant(t);
  await createdLoan(t, m.key);
  const [template] = await t.db.select({ id: events.id }).from(events).where(eq(events.tenantId, m.tenantId)).limit(1);
  // Relay whatever else is pending first, so the pages below are this tenant's copies.
  await drainOutbox({ db: t.db, queue: t.deps.queue }, { now: t.clock.now() });
  const copies = RELAY_PAGE * 2 + 5;
  await t.client.execute({
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
          INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at, relayed_at)
          SELECT lower(hex(randomblob(16))), (SELECT MAX(seq) FROM events) + i, tenant_id, type, mode, loan_id, envelope, created_at, NULL
          FROM events, n WHERE events.id = ?`,
    args: [copies, template!.id],
  });
  const left = async () =>
    (
      await t.db
        .select({ c: sql<number>`COUNT(*)` })
        .from(events)
        .where(and(eq(events.tenantId, m.tenantId), isNull(events.relayedAt)))
    )[0]!.c;
  const first = await drainOutbox({ db: t.db, queue: t.deps.queue }, { now: t.clock.now(), maxPages: 2 });
  expect([first.events, first.more]).toEqual([RELAY_PAGE * 2, true]);
  expect(await left()).toBe(5);
  const second = await drainOutbox({ db: t.db, queue: t.deps.queue }, { now: t.clock.now(), maxPages: 2 });
  expect([second.events, second.more]).toEqual([5, false]);
  expect(await left()).toBe(0);
});

test("the sweep stops at its page cap with loans still due and says so; the next run sweeps the rest, each loan once", async () => {
  const m = await sandboxTenant(t);
  const count = SWEEP_PAGE + 7;
  const created: { id: string }[] = [];
  for (let i = 0; i < count; i++) created.push(await createdLoan(t, m.key));
  // Past the 3-day tenure: every one of them is due (overdue not yet marked).
  t.clock.advance(3 * DAY_MS + HOUR_MS);
  const deps = { db: t.db, writer: t.deps.writer, clock: t.clock };
  const first = await sweepDueLoans(deps, { tenantId: m.tenantId, maxPages: 1 });
  expect(first).toEqual({ visited: SWEEP_PAGE, failed: 0, more: true });
  const second = await sweepDueLoans(deps, { tenantId: m.tenantId, maxPages: 1 });
  expect(second).toEqual({ visited: 7, failed: 0 });
  expect(await sweepDueLoans(deps, { tenantId: m.tenantId, maxPages: 1 })).toEqual({ visited: 0, failed: 0 });

  const overdue = await t.db
    .select({ loanId: events.loanId, n: sql<number>`COUNT(*)` })
    .from(events)
    .where(and(eq(events.tenantId, m.tenantId), eq(events.type, "loan.overdue")))
    .groupBy(events.loanId);
  expect(overdue).toHaveLength(count);
  expect(overdue.every((o) => o.n === 1)).toBe(true);
  expect(new Set(overdue.map((o) => o.loanId))).toEqual(new Set(created.map((l) => l.id)));
});
