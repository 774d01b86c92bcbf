import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { createClient } from "@libsql/client";
import { createDb } from "../../db/create-db.ts";
import { readMigrations } from "../../db/migration-files.ts";
import { migrateLibsql } from "../../db/migrate.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { sweepDueLoans } from "./run-sweeps.ts";
import { advancedDueLoansQuery, dueLoansQuery, liveJudgedAt, unjudgedLiveLoans } from "./sweep-loans.ts";
import { LISTEN_AFTER_DELETE_DAYS, listenedCollections } from "../settlement/collections-wallets.ts";
import { wallets } from "../../db/schema/wallets.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("the sweep reads due loans through an index on status and due time, never a table scan", async () => {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  const db = createDb(client);
  for (const tenantId of [undefined, "00000000-0000-4000-8000-000000000000"]) {
    const q = dueLoansQuery(db, Date.now(), tenantId).toSQL();
    const plan = await client.execute({ sql: `EXPLAIN QUERY PLAN ${q.sql}`, args: q.params as never[] });
    const details = plan.rows.map((r) => String(r.detail)).join("\n");
    expect(details).toMatch(/SEARCH loans USING INDEX loans_(tenant_)?status_due_idx \(.*status=\?.*due_at<\?\)/);
    // A live loan's judgement reads its tenant's wallets through the tenant's index, never every tenant's.
    if (!tenantId) expect(details).toMatch(/SEARCH w USING INDEX wallets_tenant_idx \(tenant_id=\?\)/);
    expect(details).not.toMatch(/wallets_gas_idx|SCAN/);
    expect(details).not.toMatch(/SCAN loans\b/);
  }
  client.close();
});

test("the sweep reads the loans due on moved sandbox clocks in one read: those tenants by the clock_offset_ms index, their due range by the loans index", async () => {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  const q = advancedDueLoansQuery(createDb(client), Date.now()).toSQL();
  const plan = await client.execute({ sql: `EXPLAIN QUERY PLAN ${q.sql}`, args: q.params as never[] });
  const details = plan.rows.map((r) => String(r.detail)).join("\n");
  expect(details).toMatch(/SEARCH tenants USING (COVERING )?INDEX tenants_clock_offset_idx \(clock_offset_ms>\?\)/);
  expect(details).toMatch(/SEARCH loans USING INDEX loans_tenant_status_due_idx \(tenant_id=\? AND status=\? AND due_at<\?\)/);
  expect(details).not.toMatch(/SCAN (loans|tenants)\b/);
  client.close();
});

test("a sweep that starts late catches up: overdue then defaulted in one run, once, late fees stopped at the default", async () => {
  const owner = await sandboxTenant(t);
  const key = owner.key;
  const loan = await createdLoan(t, key);
  // Thirty days pass with no tick at all.
  await t.db
    .update(tenants)
    .set({ clockOffsetMs: 30 * DAY_MS })
    .where(eq(tenants.id, owner.tenantId));
  const first = await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock });
  expect(first.failed).toBe(0);
  const again = await Promise.all([
    sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock }),
    sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock }),
  ]);
  expect(again.every((r) => r.failed === 0)).toBe(true);
  const rows = await t.db.select({ type: events.type, envelope: events.envelope }).from(events).where(eq(events.loanId, loan.id)).orderBy(events.seq);
  expect(rows.map((e) => e.type)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
  // Each shows the loan as it was at its own step: overdue while still ACTIVE, then DEFAULTED.
  const loanOf = (type: string) => (rows.find((e) => e.type === type)!.envelope.data as { loan: Record<string, unknown> }).loan;
  expect(loanOf("loan.overdue")).toMatchObject({ status: "ACTIVE", overdue: true, defaultedAt: null, lateFee: "3.00" });
  expect(loanOf("loan.defaulted")).toMatchObject({ status: "DEFAULTED", overdue: true, defaultedAt: expect.any(String), lateFee: "3.00" });
  const [row] = await t.db
    .select()
    .from(loans)
    .where(and(eq(loans.id, loan.id)));
  expect(row!.status).toBe("DEFAULTED");
  expect(row!.lateFeeDays).toBe(3);
  expect(row!.defaultedAt!.getTime()).toBe(row!.dueAt!.getTime() + 3 * DAY_MS);
  const view = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": key } });
  expect(view.body).toMatchObject({ status: "DEFAULTED", lateFee: "3.00", totalDue: "105.00", overdue: true });
});

test("one sweep finds the due loans of every tenant whose sandbox clock moved, on that tenant's clock, and leaves a tenant on the system clock alone", async () => {
  const owners = [await sandboxTenant(t), await sandboxTenant(t), await sandboxTenant(t)];
  const loansOf = await Promise.all(owners.map((o) => createdLoan(t, o.key)));
  // The first two tenants' clocks run past their loan's due date (by different amounts); the third's does not move.
  for (const [i, days] of [40, 33].entries()) {
    await t.db
      .update(tenants)
      .set({ clockOffsetMs: days * DAY_MS })
      .where(eq(tenants.id, owners[i]!.tenantId));
  }
  const report = await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock });
  expect(report.failed).toBe(0);
  const rows = await Promise.all(loansOf.map((l) => rowOf(l.id)));
  expect(rows.map((r) => r.overdueAt !== null)).toEqual([true, true, false]);
  expect(rows[2]!.status).toBe("ACTIVE");
  expect(await typesOf(loansOf[0]!.id)).toContain("loan.overdue");
  expect(await typesOf(loansOf[1]!.id)).toContain("loan.overdue");
  expect(await typesOf(loansOf[2]!.id)).not.toContain("loan.overdue");
});

// --- the rules each line of the sweep carries -------------------------------------

/** Sweeps `tenantId`'s loans with its clock at `atMs` (the offset set directly, so no helper sweeps on the way). */
async function sweepAt(tenantId: string, atMs: number) {
  await t.db
    .update(tenants)
    .set({ clockOffsetMs: atMs - t.clock.now().getTime() })
    .where(eq(tenants.id, tenantId));
  const report = await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId });
  expect(report.failed).toBe(0);
  return report;
}

const rowOf = async (loanId: string) => (await t.db.select().from(loans).where(eq(loans.id, loanId)))[0]!;
const typesOf = async (loanId: string) =>
  (await t.db.select({ type: events.type }).from(events).where(eq(events.loanId, loanId)).orderBy(events.seq)).map((e) => e.type);

/** A funded loan of a fresh tenant whose configuration has `gracePeriodDays`. */
async function loanWithGrace(gracePeriodDays: number) {
  const owner = await sandboxTenant(t);
  const auth = { authorization: `Bearer ${owner.token}` };
  const [config] = (await t.request("GET", "/v1/merchant-configs", { headers: auth })).body.data;
  const { id, network, stablecoin, tenures, minTicket, maxTicket, processingFee, lateFee } = config;
  const saved = await t.request("PUT", `/v1/merchant-configs/${id}`, {
    body: { network, stablecoin, tenures, minTicket, maxTicket, gracePeriodDays, processingFee, lateFee },
    headers: auth,
  });
  expect(saved.status).toBe(200);
  const loan = await createdLoan(t, owner.key);
  expect(loan).toMatchObject({ status: "ACTIVE", gracePeriodDays });
  return { owner, loan, dueAt: Date.parse(loan.dueAt) };
}

test("each started day past due is stored on the loan by the sweep, and a loan whose day is recorded is not visited again", async () => {
  const { owner, loan, dueAt } = await loanWithGrace(3);
  for (const day of [1, 2, 3]) {
    // Within the day'th started day past due, still inside the grace period.
    const first = await sweepAt(owner.tenantId, dueAt + (day - 1) * DAY_MS + 60_000);
    expect(first.visited).toBe(1);
    const row = await rowOf(loan.id);
    expect({ day, status: row.status, lateFeeDays: row.lateFeeDays }).toEqual({ day, status: "ACTIVE", lateFeeDays: day });
    // The day is recorded: the same moment again has nothing due.
    expect((await sweepAt(owner.tenantId, dueAt + (day - 1) * DAY_MS + 60_000)).visited).toBe(0);
  }
  expect((await typesOf(loan.id)).filter((x) => x === "loan.overdue")).toHaveLength(1);
});

test("a loan swept on its last grace day defaults on the first sweep past grace: DEFAULTED at dueAt + grace, loan.defaulted once, late fees stopped at grace", async () => {
  const { owner, loan, dueAt } = await loanWithGrace(3);
  await sweepAt(owner.tenantId, dueAt + 2 * DAY_MS + 60_000);
  expect(await rowOf(loan.id)).toMatchObject({ status: "ACTIVE", lateFeeDays: 3 });
  // The last instant of grace: still ACTIVE, nothing due.
  expect((await sweepAt(owner.tenantId, dueAt + 3 * DAY_MS)).visited).toBe(0);
  expect((await rowOf(loan.id)).status).toBe("ACTIVE");

  // Judged to the second, as a chain dates a payment (pricing.ts wholeSecondMs).
  await sweepAt(owner.tenantId, dueAt + 3 * DAY_MS + 1_000);
  const row = await rowOf(loan.id);
  expect({ status: row.status, lateFeeDays: row.lateFeeDays, defaultedAt: row.defaultedAt?.getTime() }).toEqual({
    status: "DEFAULTED",
    lateFeeDays: 3,
    defaultedAt: dueAt + 3 * DAY_MS,
  });
  expect(await typesOf(loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
  expect((await sweepAt(owner.tenantId, dueAt + 10 * DAY_MS)).visited).toBe(0);
  const view = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": owner.key } });
  expect(view.body).toMatchObject({ status: "DEFAULTED", lateFeeDays: 3, lateFee: "3.00", totalDue: "105.00" });
});

test("grace 0: nothing at dueAt itself; the first sweep after it marks the loan overdue and defaults it at dueAt, with no late fee", async () => {
  const { owner, loan, dueAt } = await loanWithGrace(0);
  expect((await sweepAt(owner.tenantId, dueAt)).visited).toBe(0);
  expect(await rowOf(loan.id)).toMatchObject({ status: "ACTIVE", overdueAt: null });

  await sweepAt(owner.tenantId, dueAt + 1_000);
  const row = await rowOf(loan.id);
  expect({ status: row.status, lateFeeDays: row.lateFeeDays, defaultedAt: row.defaultedAt?.getTime() }).toEqual({
    status: "DEFAULTED",
    lateFeeDays: 0,
    defaultedAt: dueAt,
  });
  expect(await typesOf(loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
  expect((await sweepAt(owner.tenantId, dueAt + 5 * DAY_MS)).visited).toBe(0);
  const view = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": owner.key } });
  expect(view.body).toMatchObject({ status: "DEFAULTED", overdue: true, lateFeeDays: 0, lateFee: "0.00", totalDue: "102.00" });
});

test("a live loan is judged only as far as its chain has been read: not past the cursor block's time (a failed poll, a payment in its confirmations, a catch-up), not while a payment naming it is held, not past its tenant's least-read TON wallet", async () => {
  const m = await sandboxTenant(t);
  const now = t.clock.now().getTime();
  /** A loan of `chain` made live, ACTIVE, due `daysAgo` days ago on the system clock (3 days' grace). */
  const liveDue = async (chain: "POLYGON" | "TON", daysAgo = 2) => {
    const loan = await createdLoan(t, m.key);
    await t.db
      .update(loans)
      .set({ mode: "live", chain, status: "ACTIVE", dueAt: new Date(now - daysAgo * DAY_MS), gracePeriodDays: 3 })
      .where(eq(loans.id, loan.id));
    return loan.id;
  };
  const state = async (loanId: string) => {
    const [row] = await t.db.select({ status: loans.status, overdueAt: loans.overdueAt, days: loans.lateFeeDays }).from(loans).where(eq(loans.id, loanId));
    return row!.status === "DEFAULTED" ? "DEFAULTED" : row!.overdueAt ? `OVERDUE ${row!.days}` : "ACTIVE";
  };
  const sweep = async () => expect((await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock })).failed).toBe(0);
  const readThrough = (at: number) => t.client.execute({ sql: "UPDATE chain_cursors SET read_through_at = ? WHERE chain = 'POLYGON'", args: [at] });

  const evm = await liveDue("POLYGON");
  const evm2 = await liveDue("POLYGON");
  const late = await liveDue("POLYGON", 4);
  const ton = await liveDue("TON");
  // No cursor: the chain has never been read, so nothing says the borrower did not pay.
  await sweep();
  expect([await state(evm), await state(late)]).toEqual(["ACTIVE", "ACTIVE"]);
  // The cron says so (an error in its log): live loans far past due wait on a chain not read past their deadline.
  expect(await unjudgedLiveLoans(t.db, t.clock.now())).toEqual([{ chain: "POLYGON", loans: 3, oldestDueAt: now - 4 * DAY_MS }]);
  // Read through a block of 4.5 days ago (an outage since, its polls failing): still nothing is judged.
  await t.client.execute({
    sql: "INSERT INTO chain_cursors (chain, last_block, updated_at, failures, read_through_at) VALUES ('POLYGON', 1, ?, 4, ?)",
    args: [now, now - 4.5 * DAY_MS],
  });
  await sweep();
  expect([await state(evm), await state(late)]).toEqual(["ACTIVE", "ACTIVE"]);
  // Caught up to 1 day 12 hours ago, a poll still failing: judged as of then. The loan due 2 days ago is overdue with
  // its first late fee day only; the one due 4 days ago (grace 3 days) is overdue, not yet defaulted: its borrower may
  // have paid in the 36 hours since.
  await readThrough(now - 1.5 * DAY_MS);
  await sweep();
  expect([await state(evm), await state(evm2), await state(late)]).toEqual(["OVERDUE 1", "OVERDUE 1", "OVERDUE 3"]);
  expect(await unjudgedLiveLoans(t.db, t.clock.now())).toEqual([]);
  // The change is recorded when it happens, not at the time it is judged at.
  const [marked] = await t.db.select({ overdueAt: loans.overdueAt }).from(loans).where(eq(loans.id, evm));
  expect(marked!.overdueAt!.getTime()).toBe(now);

  // Read through now, but a payment naming `late` is held (read, its apply failed): it is not defaulted.
  const observation = JSON.stringify({ kind: "payment", chain: "POLYGON", txHash: "0x01", logIndex: 0, loanId: late, amount: "102000000" });
  await t.client.execute({
    sql: "INSERT INTO held_payments (chain, tx_hash, log_index, kind, block_number, observation, attempts, last_error, next_attempt_at, created_at, updated_at) VALUES ('POLYGON', '0x01', 0, 'payment', 1, ?, 1, 'x', ?, ?, ?)",
    args: [observation, now, now, now],
  });
  await readThrough(now);
  await sweep();
  expect([await state(evm), await state(late)]).toEqual(["OVERDUE 2", "OVERDUE 3"]);
  // A reorg moved the cursor back (read-through unknown): nothing is judged until the next read.
  await t.client.execute("DELETE FROM held_payments WHERE tx_hash = '0x01'");
  await t.client.execute("UPDATE chain_cursors SET read_through_at = NULL WHERE chain = 'POLYGON'");
  await sweep();
  expect(await state(late)).toBe("OVERDUE 3");
  await readThrough(now);
  await sweep();
  expect(await state(late)).toBe("DEFAULTED");

  // TON: a tenant without a COLLECTIONS wallet on TON can be paid nowhere, so its loan is judged on the clock.
  expect(await state(ton)).toBe("OVERDUE 2");
  const other = await sandboxTenant(t, "Other Pay");
  await t.client.execute({ sql: "UPDATE tenants SET certified_at = ? WHERE id IN (?, ?)", args: [now, m.tenantId, other.tenantId] });
  const collections = async (tenantId: string, address: string) =>
    t.client.execute({
      sql: "INSERT INTO wallets (id, tenant_id, chain, role, address, verified_at, created_at, updated_at) VALUES (?, ?, 'TON', 'COLLECTIONS', ?, ?, ?, ?)",
      args: [crypto.randomUUID(), tenantId, address, now, now, now],
    });
  const reads = (tenantId: string, address: string, at: number) =>
    t.client.execute({
      sql: "INSERT INTO ton_wallet_reads (tenant_id, address, read_through_at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET read_through_at = excluded.read_through_at",
      args: [tenantId, address, at],
    });
  const ton2 = await liveDue("TON", 5);
  await collections(m.tenantId, "0:aa");
  await collections(m.tenantId, "0:bb");
  await collections(other.tenantId, "0:cc");
  // 0:bb never read through (toncenter failing, or a backlog): held back, whatever the other wallets read.
  await reads(m.tenantId, "0:aa", now);
  await reads(other.tenantId, "0:cc", now);
  await sweep();
  expect(await state(ton2)).toBe("ACTIVE");
  // Its least-read wallet read through 2.5 days ago: overdue, not defaulted.
  await reads(m.tenantId, "0:bb", now - 2.5 * DAY_MS);
  await sweep();
  expect(await state(ton2)).toBe("OVERDUE 3");
  await reads(m.tenantId, "0:bb", now - 60_000);
  await sweep();
  expect(await state(ton2)).toBe("DEFAULTED");
});

test("a live loan's judged time is a whole second, as its own judgement: a read-through half a second past dueAt neither finds the loan nor leaves it found and unchanged on every page", async () => {
  const m = await sandboxTenant(t, "Sub-second Pay");
  const now = t.clock.now().getTime();
  const dueAt = Math.floor(now / 1000) * 1000 - 10_000 + 300;
  const loan = await createdLoan(t, m.key);
  await t.db
    .update(loans)
    .set({ mode: "live", chain: "TON", status: "ACTIVE", dueAt: new Date(dueAt), gracePeriodDays: 3 })
    .where(eq(loans.id, loan.id));
  await t.client.execute({ sql: "UPDATE tenants SET certified_at = ? WHERE id = ?", args: [now, m.tenantId] });
  await t.client.execute({
    sql: "INSERT INTO wallets (id, tenant_id, chain, role, address, verified_at, created_at, updated_at) VALUES (?, ?, 'TON', 'COLLECTIONS', '0:dd', ?, ?, ?)",
    args: [crypto.randomUUID(), m.tenantId, now, now, now],
  });
  const reads = (at: number) =>
    t.client.execute({
      sql: "INSERT INTO ton_wallet_reads (tenant_id, address, read_through_at) VALUES (?, '0:dd', ?) ON CONFLICT DO UPDATE SET read_through_at = excluded.read_through_at",
      args: [m.tenantId, at],
    });
  const sweep = () => sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: undefined });
  await reads(dueAt + 500);
  expect((await dueLoansQuery(t.db, now)).map((l) => l.loanId)).not.toContain(loan.id);
  expect(await sweep()).toMatchObject({ failed: 0 });
  await reads(dueAt + 700);
  expect((await t.db.select({ overdueAt: loans.overdueAt }).from(loans).where(eq(loans.id, loan.id)))[0]!.overdueAt).toBeNull();
  await reads(dueAt + 1_000);
  expect((await dueLoansQuery(t.db, now)).map((l) => l.loanId)).toContain(loan.id);
  await sweep();
  expect((await t.db.select({ overdueAt: loans.overdueAt }).from(loans).where(eq(loans.id, loan.id)))[0]!.overdueAt).not.toBeNull();
});

test("a live TON loan waits on exactly the wallets the listener reads (liveJudgedAt writes listenedCollections out in SQL): deleted within the window, verified, COLLECTIONS, TON, of a certified tenant", async () => {
  const now = t.clock.now().getTime();
  const cases = [
    { name: "listened", deletedDaysAgo: null, verified: true, role: "COLLECTIONS", chain: "TON", certified: true },
    { name: "deleted inside the window", deletedDaysAgo: LISTEN_AFTER_DELETE_DAYS - 1, verified: true, role: "COLLECTIONS", chain: "TON", certified: true },
    { name: "deleted past the window", deletedDaysAgo: LISTEN_AFTER_DELETE_DAYS + 1, verified: true, role: "COLLECTIONS", chain: "TON", certified: true },
    { name: "unverified", deletedDaysAgo: null, verified: false, role: "COLLECTIONS", chain: "TON", certified: true },
    { name: "a DISBURSEMENT wallet", deletedDaysAgo: null, verified: true, role: "DISBURSEMENT", chain: "TON", certified: true },
    { name: "on another chain", deletedDaysAgo: null, verified: true, role: "COLLECTIONS", chain: "POLYGON", certified: true },
    { name: "an uncertified tenant's", deletedDaysAgo: null, verified: true, role: "COLLECTIONS", chain: "TON", certified: false },
  ];
  const seen: { name: string; listened: boolean; holdsBack: boolean }[] = [];
  for (const c of cases) {
    const m = await sandboxTenant(t, `Listened ${c.name}`);
    const loan = await createdLoan(t, m.key);
    await t.db
      .update(loans)
      .set({ mode: "live", chain: "TON", status: "ACTIVE", dueAt: new Date(now - 2 * DAY_MS) })
      .where(eq(loans.id, loan.id));
    if (c.certified) await t.client.execute({ sql: "UPDATE tenants SET certified_at = ? WHERE id = ?", args: [now, m.tenantId] });
    await t.client.execute({
      sql: "INSERT INTO wallets (id, tenant_id, chain, role, address, verified_at, deleted_at, created_at, updated_at) VALUES (?, ?, ?, ?, '0:ee', ?, ?, ?, ?)",
      args: [
        crypto.randomUUID(),
        m.tenantId,
        c.chain,
        c.role,
        c.verified ? now : null,
        c.deletedDaysAgo === null ? null : now - c.deletedDaysAgo * DAY_MS,
        now,
        now,
      ],
    });
    const listened =
      (
        await t.db
          .select()
          .from(wallets)
          .where(and(eq(wallets.tenantId, m.tenantId), listenedCollections("TON", new Date(now))))
      ).length > 0;
    const [row] = await t.db
      .select({ at: liveJudgedAt(now) })
      .from(loans)
      .where(eq(loans.id, loan.id));
    // Never read, a listened wallet holds the loan back (judged at 0); any other is no wallet at all (judged now).
    seen.push({ name: c.name, listened, holdsBack: Number(row!.at) === 0 });
  }
  for (const s of seen) expect({ name: s.name, holdsBack: s.holdsBack }).toEqual({ name: s.name, holdsBack: s.listened });
  expect(seen.map((s) => s.listened)).toEqual([true, true, false, false, false, false, false]);
});
