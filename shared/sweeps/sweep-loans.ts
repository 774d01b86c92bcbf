import { and, asc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { tenants } from "../../db/schema/tenants.ts";
import type { TenantMode } from "../domain/rails.ts";
import { DAY_MS, isOverdue, isPastGrace, lateFeeDays } from "../domain/pricing.ts";
import { commitTransition, commitUpdate } from "../loans/commit-transition.ts";
import type { LoanContext } from "../loans/loan-context.ts";
import { loadLoan } from "../loans/load-loan.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";

/** Loans a sweep handles per page; a run pages until nothing is due. */
export const SWEEP_PAGE = 100;

/**
 * ACTIVE loans with something due at `nowMs`: overdue not yet marked, a late
 * fee day not yet recorded, or grace elapsed. The range `status = 'ACTIVE'
 * AND due_at < now` is read through the (tenant_id, status, due_at) or
 * (status, due_at) index, so only loans past due are visited, never the table.
 */
function dueCondition(nowMs: number) {
  const now = new Date(nowMs);
  return and(
    eq(loans.status, "ACTIVE"),
    lt(loans.dueAt, now),
    or(
      isNull(loans.overdueAt),
      // Started days past due, as an integer: the client may bind `nowMs` as a REAL, and
      // a fractional day count would keep every loan inside grace due on every tick.
      sql`${loans.lateFeeDays} < MIN(${loans.gracePeriodDays}, CAST((${nowMs} - ${loans.dueAt} + ${DAY_MS - 1}) / ${DAY_MS} AS INTEGER))`,
      sql`${loans.dueAt} + ${loans.gracePeriodDays} * ${DAY_MS} < ${nowMs}`,
    ),
  );
}

/**
 * The loans due for the sweep, across tenants: each loan is judged on its
 * mode's clock (live loans on the system clock, sandbox loans on the tenant's
 * sandbox clock). Loans on the system clock are covered by one range read;
 * the sandbox loans of tenants whose sandbox clock was advanced are read one
 * tenant at a time (that clock only moves forward, so the shared read never
 * sees too much).
 */
export async function findLoansToSweep(db: Db, systemNow: Date, onlyTenantId?: string): Promise<{ tenantId: string; loanId: string }[]> {
  const advanced = onlyTenantId
    ? [{ id: onlyTenantId, offset: (await loadTenant(db, onlyTenantId)).clockOffsetMs }]
    : await db.select({ id: tenants.id, offset: tenants.clockOffsetMs }).from(tenants).where(gt(tenants.clockOffsetMs, 0));
  const pages = await Promise.all([
    dueLoansQuery(db, systemNow.getTime(), onlyTenantId),
    ...advanced.filter((t) => t.offset > 0).map((t) => dueLoansQuery(db, systemNow.getTime() + t.offset, t.id, "sandbox")),
  ]);
  const seen = new Set<string>();
  return pages.flat().filter((l) => (seen.has(l.loanId) ? false : (seen.add(l.loanId), true)));
}

/** One page of due loans at `nowMs`, of one tenant or of all, of one mode or of both. */
export const dueLoansQuery = (db: Db, nowMs: number, tenantId?: string, mode?: TenantMode) =>
  db
    .select({ tenantId: loans.tenantId, loanId: loans.id })
    .from(loans)
    .where(and(tenantId ? eq(loans.tenantId, tenantId) : undefined, mode ? eq(loans.mode, mode) : undefined, dueCondition(nowMs)))
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
  if (loan.status !== "ACTIVE" || !loan.dueAt || !isOverdue(loan.dueAt, now)) return loan;
  const days = lateFeeDays(loan.dueAt, now, loan.gracePeriodDays);
  if (isPastGrace(loan.dueAt, loan.gracePeriodDays, now)) {
    const defaultedAt = new Date(loan.dueAt.getTime() + loan.gracePeriodDays * DAY_MS);
    return commitTransition(deps.db, {
      loan,
      trigger: { kind: "GRACE_ELAPSED" },
      now,
      set: { defaultedAt, lateFeeDays: loan.gracePeriodDays, overdueAt: loan.overdueAt ?? now },
    });
  }
  if (!loan.overdueAt) {
    return commitTransition(deps.db, { loan, trigger: { kind: "MARK_OVERDUE" }, now, set: { lateFeeDays: days } });
  }
  if (days > loan.lateFeeDays) return (await commitUpdate(deps.db, loan, { lateFeeDays: days }, now)) ?? loan;
  return loan;
}
