import { and, asc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans } from "../../db/schema/loans.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { LoanCommand, LoanWriter } from "../loans/loan-commands.ts";
import type { VerbDeps } from "../verbs.ts";
import { findLoansToSweep, markSweepFailed, SWEEP_PAGE } from "./sweep-loans.ts";

/** A run stops after this many pages, so one tick stays bounded; the next tick continues. */
const MAX_PAGES = 20;

/**
 * `more`: the run stopped at its page cap with loans still due (the cron
 * continues it). `errors`: why loans failed, the first few (loan id and the
 * error's name and message), so a loan that keeps failing is seen in the log.
 */
export type SweepReport = { visited: number; failed: number; more?: true; errors?: { loanId: string; error: string }[] };

/** The failures kept in a report. */
const MAX_REPORTED_ERRORS = 5;

const describeFailure = (reason: unknown) => (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)).slice(0, 300);

async function runAll(writer: LoanWriter, commands: LoanCommand[]): Promise<{ failed: number; errors: { loanId: string; error: string }[] }> {
  const results = await Promise.allSettled(commands.map((cmd) => writer.run(cmd)));
  const errors = results.flatMap((r, i) => (r.status === "rejected" ? [{ loanId: commands[i]!.loanId, error: describeFailure(r.reason) }] : []));
  return { failed: errors.length, errors };
}

/**
 * The overdue/default sweep: every due loan goes through its own writer
 * (`sweepLoan`), page after page until none is due. Overlapping runs are
 * harmless: each loan's writer serializes them and the second finds nothing
 * to do. A loan whose sweep throws is marked and left out of the pages for
 * SWEEP_RETRY_AFTER_MS (sweep-loans.ts), so it neither spins the loop nor
 * holds the first places of every page from the loans behind it.
 */
export async function sweepDueLoans(
  { db, writer, clock }: Pick<VerbDeps, "db" | "writer" | "clock">,
  { tenantId, maxPages = MAX_PAGES }: { tenantId?: string; maxPages?: number } = {},
): Promise<SweepReport> {
  const systemNow = clock.now();
  const report: SweepReport = { visited: 0, failed: 0 };
  const errors: { loanId: string; error: string }[] = [];
  for (let page = 0; page < maxPages; page++) {
    const due = await findLoansToSweep(db, systemNow, tenantId);
    if (due.length === 0) return withErrors(report, errors);
    const results = await Promise.allSettled(due.map((l) => writer.run({ kind: "sweep", tenantId: l.tenantId, loanId: l.loanId })));
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ loanId: due[i]!.loanId, error: describeFailure(r.reason) }] : []));
    // Left out of the next pages (and runs) for a while: the rest are swept, and these are tried again later.
    if (failed.length > 0) await markSweepFailed(db, [...new Set(failed.map((f) => f.loanId))], systemNow);
    errors.push(...failed);
    report.visited += due.length;
    report.failed += failed.length;
    if (due.length < SWEEP_PAGE) return withErrors(report, errors);
  }
  report.more = true;
  return withErrors(report, errors);
}

/** The report with the first few failures named, when there were any. */
const withErrors = (report: SweepReport, errors: { loanId: string; error: string }[]): SweepReport =>
  errors.length > 0 ? { ...report, errors: errors.slice(0, MAX_REPORTED_ERRORS) } : report;

/**
 * Loans waiting to be funded: approved, still CREATED, and not funded or
 * waiting for the loan-level KYC gate. Written as literals, the partial
 * index `loans_funding_retry_idx` (migration 0044) holds exactly these, so
 * SQLite can read through it (the plan is tested).
 */
const waitingToBeFunded = sql`${loans.status} = 'CREATED' AND ${loans.decisionOutcome} = 'APPROVED' AND ${loans.fundingState} IN ('NONE', 'AWAITING_LIQUIDITY', 'HELD', 'RESERVED')`;

/** One page of a mode's loans waiting to be funded, least recently retried first (never retried first), none marked at `mark` or after. */
export const fundingRetryPage = (db: Db, q: { mode: TenantMode; mark: number; tenantId?: string; limit: number }) =>
  db
    .select({ tenantId: loans.tenantId, loanId: loans.id, createdAt: loans.createdAt })
    .from(loans)
    .where(
      and(
        waitingToBeFunded,
        eq(loans.mode, q.mode),
        or(isNull(loans.fundingRetryMark), lt(loans.fundingRetryMark, q.mark)),
        q.tenantId ? eq(loans.tenantId, q.tenantId) : undefined,
      ),
    )
    .orderBy(asc(loans.fundingRetryMark), asc(loans.createdAt), asc(loans.id))
    .limit(q.limit);

/**
 * This run's mark in `mode`: its time, or one past the highest mark of a waiting loan of the mode when that is not
 * later (a clock that did not move, as in tests). Read through the partial index (mode first).
 */
async function runMark(db: Db, mode: TenantMode, now: Date): Promise<number> {
  const [row] = await db
    .select({ highest: sql<number | null>`max(${loans.fundingRetryMark})` })
    .from(loans)
    .where(and(waitingToBeFunded, eq(loans.mode, mode)));
  return Math.max(now.getTime(), (row?.highest ?? 0) + 1);
}

/** Pages of waiting loans one run takes at most, both modes together: a page is 2 reads and up to 100 loan-writer calls. */
export const RETRY_PAGES_PER_RUN = 5;

/**
 * Approved loans still waiting to be funded (no liquidity before, a failed
 * transfer, a hold, a live transfer broadcast and not yet deep enough, or a
 * run cut off after reserving): live loans first, then sandbox ones, each
 * mode least recently retried first, page after page, at most `maxPages`
 * pages in all (then `more`: the cron continues the run, then the next tick).
 * Each page is marked with the run's turn before its loans run, so loans
 * that wait for good (a pool left at 0) take their turn and leave the rest
 * theirs: before, each run took the 100 oldest and nothing else, so anyone's
 * 100 unfundable sandbox loans stopped every other tenant's retries, live
 * transfers in flight included. Within a page, oldest first, one at a time:
 * the first loans get the returning liquidity. A loan whose own request is
 * still at work is safe to touch: its writer queues this behind that
 * request, and processing a funded loan does nothing. `mode`: that mode's
 * loans only.
 */
export async function retryFunding(
  { db, writer, clock }: Pick<VerbDeps, "db" | "writer" | "clock">,
  input: { tenantId?: string; mode?: TenantMode; limit?: number; maxPages?: number } = {},
): Promise<SweepReport> {
  const limit = input.limit ?? SWEEP_PAGE;
  let pagesLeft = input.maxPages ?? RETRY_PAGES_PER_RUN;
  const report: SweepReport = { visited: 0, failed: 0 };
  const errors: { loanId: string; error: string }[] = [];
  for (const mode of input.mode ? [input.mode] : (["live", "sandbox"] as const)) {
    const mark = await runMark(db, mode, clock.now());
    for (;;) {
      if (pagesLeft === 0) {
        report.more = true;
        break;
      }
      pagesLeft--;
      const rows = await fundingRetryPage(db, { mode, mark, tenantId: input.tenantId, limit });
      if (rows.length === 0) break;
      // One parameter for the ids (D1 binds at most 100 per statement).
      await db
        .update(loans)
        .set({ fundingRetryMark: mark })
        .where(sql`${loans.id} IN (SELECT value FROM json_each(${JSON.stringify(rows.map((r) => r.loanId))}))`);
      const oldestFirst = [...rows].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.loanId < b.loanId ? -1 : 1));
      for (const r of oldestFirst) errors.push(...(await runAll(writer, [{ kind: "process", tenantId: r.tenantId, loanId: r.loanId }])).errors);
      report.visited += rows.length;
      if (rows.length < limit) break;
    }
  }
  return withErrors({ ...report, failed: errors.length }, errors);
}
