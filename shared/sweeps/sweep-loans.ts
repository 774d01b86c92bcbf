import { and, asc, eq, gt, isNull, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { LISTEN_AFTER_DELETE_DAYS } from "../settlement/collections-wallets.ts";
import type { TenantMode } from "../domain/rails.ts";
import { DAY_MS, isOverdue, isPastGrace, lateFeeDays, wholeSecondMs } from "../domain/pricing.ts";
import { commitTransition, commitUpdate } from "../loans/commit-transition.ts";
import type { LoanContext } from "../loans/loan-context.ts";
import { loadLoan } from "../loans/load-loan.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";

/** Loans a sweep handles per page; a run pages until nothing is due. */
export const SWEEP_PAGE = 100;

/** How long a loan whose sweep threw is left out of the sweep's pages (migration 0045), on the system clock. */
export const SWEEP_RETRY_AFTER_MS = 5 * 60_000;

/**
 * Not a loan whose sweep threw at `failedBefore` (system time) or later: the
 * cron's sweep leaves out those that threw in the last SWEEP_RETRY_AFTER_MS
 * (before, such loans stayed first in line on every page, and 100 of them
 * stopped the sweep of every other loan); one tenant's sweep only those that
 * threw in this run.
 */
const notFailedSince = (failedBefore: number) => or(isNull(loans.sweepFailedAt), lt(loans.sweepFailedAt, failedBefore));

/** Marks loans whose sweep threw at `now` (system clock), one parameter for the ids (D1 binds at most 100). */
export const markSweepFailed = (db: Db, loanIds: readonly string[], now: Date) =>
  db
    .update(loans)
    .set({ sweepFailedAt: now.getTime() })
    .where(sql`${loans.id} IN (SELECT value FROM json_each(${JSON.stringify(loanIds)}))`);

/** A payment naming the loan that the listener read and could not apply yet (held_payments): it may have been on time. */
const heldNamingLoan = sql`EXISTS (SELECT 1 FROM held_payments WHERE held_payments.chain = loans.chain AND held_payments.kind = 'payment'
  AND json_extract(held_payments.observation, '$.loanId') = loans.id)`;

/**
 * The time a live loan is judged at, for overdue and default (ms; SQL over `loans`, written out qualified: drizzle
 * leaves a selected expression's columns bare, and inside the subqueries a bare `chain` or `tenant_id` would be the
 * wallet's): `nowMs`, or earlier, the time up to which its chain's settlement listener has read every payment that
 * could repay it. A payment not read yet may have been made before the deadline: sweeping first sent loan.overdue and
 * loan.defaulted for a borrower who had paid on time (the payment is judged at its own time once read, but the events
 * cannot be taken back). So:
 * - live EVM: the block time of the chain's cursor block (chain_cursors.read_through_at), which stays put while a poll
 *   fails (an RPC outage), while a payment waits for its confirmations and while the listener catches up, block by block;
 *   no cursor yet: never;
 * - TON: the least read of the tenant's listened COLLECTIONS wallets (ton_wallet_reads: a poll that reached the newest
 *   transaction, less TON_READ_LAG_MS), which stays put while toncenter fails or a backlog is being read; a wallet never
 *   read through: never; no wallet: `nowMs` (nothing could repay it);
 * - never while a payment naming the loan is held (read, its apply failed, tried again at the next polls).
 * Sandbox loans are judged on their tenant's clock: its advance polls the tenant's ledgers before it sweeps. The
 * tenant's wallets are read through its own index (INDEXED BY: on few rows SQLite took the role index, every tenant's
 * COLLECTIONS wallets).
 */
export const liveJudgedAt = (nowMs: number) => {
  const deletedAfter = nowMs - LISTEN_AFTER_DELETE_DAYS * DAY_MS;
  // To the whole second, as the loan's own judgement (pricing.ts wholeSecondMs), whatever a listener stored.
  return sql<number>`CAST((CASE
  WHEN ${heldNamingLoan} THEN 0
  WHEN loans.chain = 'TON' THEN MIN(${nowMs}, coalesce((SELECT MIN(coalesce(r.read_through_at, 0)) FROM wallets w INDEXED BY wallets_tenant_idx
    LEFT JOIN ton_wallet_reads r ON r.tenant_id = w.tenant_id AND r.address = w.address
    WHERE w.tenant_id = loans.tenant_id AND w.chain = 'TON' AND w.role = 'COLLECTIONS' AND w.verified_at IS NOT NULL
      AND (w.deleted_at IS NULL OR w.deleted_at > ${deletedAfter})
      AND EXISTS (SELECT 1 FROM tenants c WHERE c.id = w.tenant_id AND c.certified_at IS NOT NULL)), ${nowMs}))
  ELSE MIN(${nowMs}, coalesce((SELECT c.read_through_at FROM chain_cursors c WHERE c.chain = loans.chain), 0))
END) / 1000 AS INTEGER) * 1000`;
};

/** How long past due a live loan may wait for its chain to be read before the cron says so (Polygon's 64 confirmations take about 2 minutes). */
export const JUDGEMENT_LAG_ALERT_MS = 15 * 60_000;

/**
 * Live loans more than JUDGEMENT_LAG_ALERT_MS past due that are not judged overdue yet because their chain has not
 * been read past their deadline (liveJudgedAt), per chain, with the oldest deadline: a listener down, failing or far
 * behind, or one that never ran (a live EVM chain without a pool contract is never read). The cron's sweep logs them
 * as an error; without it such loans would wait silently. Read through the (status, due_at) index.
 */
export async function unjudgedLiveLoans(db: Db, now: Date): Promise<{ chain: string; loans: number; oldestDueAt: number }[]> {
  const nowMs = now.getTime();
  const rows = await db
    .select({ chain: loans.chain, loans: sql<number>`count(*)`, oldestDueAt: sql<number>`min(${loans.dueAt})` })
    .from(loans)
    .where(
      and(
        eq(loans.status, "ACTIVE"),
        sql`${loans.dueAt} < ${nowMs - JUDGEMENT_LAG_ALERT_MS}`,
        eq(loans.mode, "live"),
        isNull(loans.overdueAt),
        sql`${liveJudgedAt(nowMs)} <= ${loans.dueAt}`,
      ),
    )
    .groupBy(loans.chain);
  return rows.map((r) => ({ chain: r.chain, loans: Number(r.loans), oldestDueAt: Number(r.oldestDueAt) }));
}

/**
 * ACTIVE loans with something due at `now` (ms since the epoch, a number or
 * an SQL expression of it): overdue not yet marked, a late fee day not yet
 * recorded, or grace elapsed. The range `status = 'ACTIVE' AND due_at < now`
 * is read through the (tenant_id, status, due_at) or (status, due_at) index,
 * so only loans past due are visited, never the table.
 */
function dueCondition(now: number | SQL) {
  return and(
    eq(loans.status, "ACTIVE"),
    sql`${loans.dueAt} < ${now}`,
    or(
      isNull(loans.overdueAt),
      // Started days past due, as an integer: the client may bind `now` as a REAL, and
      // a fractional day count would keep every loan inside grace due on every tick.
      sql`${loans.lateFeeDays} < MIN(${loans.gracePeriodDays}, CAST((${now} - ${loans.dueAt} + ${DAY_MS - 1}) / ${DAY_MS} AS INTEGER))`,
      sql`${loans.dueAt} + ${loans.gracePeriodDays} * ${DAY_MS} < ${now}`,
    ),
  );
}

/**
 * The loans due for the sweep, across tenants: each loan is judged on its
 * mode's clock (live loans on the system clock, sandbox loans on the tenant's
 * sandbox clock). Two reads, however many tenants there are: the loans due
 * on the system clock (one range), and the sandbox loans due on the clocks
 * of the tenants that moved theirs (that clock only moves forward, so the
 * first read never sees too much). For one tenant (its sandbox clock moved):
 * its sandbox loans only, on its clock; its live loans are the cron's, and a
 * sandbox call neither touches them nor counts them.
 */
export async function findLoansToSweep(db: Db, systemNow: Date, onlyTenantId?: string): Promise<{ tenantId: string; loanId: string }[]> {
  // To the second, as the loan's own judgement (pricing.ts wholeSecondMs): a loan the query finds is one its sweep changes.
  const nowMs = wholeSecondMs(systemNow.getTime());
  // One tenant's sweep (its sandbox clock moved: DECISIONS.md says the sweep has run when the call returns) takes its
  // loans whose sweep threw lately too, except in this very run (marked at `systemNow`); the cron's leaves them out a while.
  const failedBefore = onlyTenantId ? systemNow.getTime() : systemNow.getTime() - SWEEP_RETRY_AFTER_MS;
  const onTenantClock = async () => {
    if (!onlyTenantId) return advancedDueLoansQuery(db, nowMs);
    const offset = (await loadTenant(db, onlyTenantId)).clockOffsetMs;
    return offset > 0 ? dueLoansQuery(db, wholeSecondMs(nowMs + offset), onlyTenantId, "sandbox", failedBefore) : [];
  };
  const pages = await Promise.all([dueLoansQuery(db, nowMs, onlyTenantId, onlyTenantId ? "sandbox" : undefined, failedBefore), onTenantClock()]);
  const seen = new Set<string>();
  return pages.flat().filter((l) => (seen.has(l.loanId) ? false : (seen.add(l.loanId), true)));
}

/**
 * One page of the sandbox loans due on their tenant's clock, across the
 * tenants whose sandbox clock moved forward, in one read: those tenants
 * through the clock_offset_ms index, then each one's due range through the
 * (tenant_id, status, due_at) index (the tenants come first: CROSS JOIN keeps
 * SQLite from walking every ACTIVE loan in due order instead).
 */
export const advancedDueLoansQuery = (db: Db, systemNowMs: number) =>
  db
    .select({ tenantId: loans.tenantId, loanId: loans.id })
    .from(tenants)
    .crossJoin(loans)
    .where(
      and(
        gt(tenants.clockOffsetMs, 0),
        eq(loans.tenantId, tenants.id),
        eq(loans.mode, "sandbox"),
        dueCondition(sql`(${systemNowMs} + ${tenants.clockOffsetMs})`),
        notFailedSince(systemNowMs - SWEEP_RETRY_AFTER_MS),
      ),
    )
    .orderBy(asc(loans.dueAt))
    .limit(SWEEP_PAGE);

/** One page of due loans at `nowMs`, of one tenant or of all, of one mode or of both; without those whose sweep threw at `failedBefore` or later. */
export const dueLoansQuery = (db: Db, nowMs: number, tenantId?: string, mode?: TenantMode, failedBefore = nowMs - SWEEP_RETRY_AFTER_MS) =>
  db
    .select({ tenantId: loans.tenantId, loanId: loans.id })
    .from(loans)
    .where(
      and(
        tenantId ? eq(loans.tenantId, tenantId) : undefined,
        mode ? eq(loans.mode, mode) : undefined,
        dueCondition(nowMs),
        notFailedSince(failedBefore),
        mode === "sandbox" ? undefined : or(eq(loans.mode, "sandbox"), dueCondition(liveJudgedAt(nowMs))),
      ),
    )
    .orderBy(asc(loans.dueAt))
    .limit(SWEEP_PAGE);

/**
 * One loan's sweep, on its tenant's clock (SPEC.md "ACTIVE → DEFAULTED"):
 * past `dueAt` → `loan.overdue` once; each started day past due records its
 * late fee; past `dueAt` + grace → DEFAULTED with `loan.defaulted` once.
 * Idempotent: a second run finds nothing to do.
 */
export async function sweepLoan(deps: LoanContext, { tenantId, loanId }: { tenantId: string; loanId: string }): Promise<LoanRow> {
  const tenant = await loadTenant(deps.db, tenantId);
  const loan = await loadLoan(deps.db, tenantId, loanId);
  const now = tenantClock(deps.clock, tenant, loan.mode).now();
  if (loan.mode === "sandbox" || loan.status !== "ACTIVE") return sweepLoanAt(deps.db, loan, now);
  // A live loan as far as its chain has been read (liveJudgedAt), the change recorded now.
  const [row] = await deps.db
    .select({ at: liveJudgedAt(now.getTime()) })
    .from(loans)
    .where(and(eq(loans.tenantId, tenantId), eq(loans.id, loanId)));
  return sweepLoanAt(deps.db, loan, new Date(Number(row?.at ?? 0)), now);
}

/**
 * The sweep of one loan as of `now` (on the loan's clock): overdue past
 * `dueAt`, DEFAULTED past the grace period, the late-fee days recorded. A
 * repayment made past `dueAt` runs it as of the payment's time first
 * (apply-repayment.ts), so what the loan went through before it was paid
 * does not depend on whether a sweep happened to run in between.
 * `now`: when the change is recorded (`at` unless given: a live loan is judged
 * as far as its chain has been read, and recorded at the time it happens).
 */
export async function sweepLoanAt(db: Db, loan: LoanRow, at: Date, now: Date = at): Promise<LoanRow> {
  if (loan.status !== "ACTIVE" || !loan.dueAt || !isOverdue(loan.dueAt, at)) return loan;
  const days = lateFeeDays(loan.dueAt, at, loan.gracePeriodDays);
  if (isPastGrace(loan.dueAt, loan.gracePeriodDays, at)) {
    const defaultedAt = new Date(loan.dueAt.getTime() + loan.gracePeriodDays * DAY_MS);
    return commitTransition(db, {
      loan,
      trigger: { kind: "GRACE_ELAPSED" },
      now,
      set: { defaultedAt, defaultRecordedAt: now, lateFeeDays: loan.gracePeriodDays, overdueAt: loan.overdueAt ?? now },
    });
  }
  if (!loan.overdueAt) {
    return commitTransition(db, { loan, trigger: { kind: "MARK_OVERDUE" }, now, set: { lateFeeDays: days } });
  }
  if (days > loan.lateFeeDays) return (await commitUpdate(db, loan, { lateFeeDays: days }, now)) ?? loan;
  return loan;
}
