import { and, asc, eq, inArray } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";
import type { LoanCommand, LoanWriter } from "../loans/loan-commands.ts";
import type { VerbDeps } from "../verbs.ts";
import { findLoansToSweep, SWEEP_PAGE } from "./sweep-loans.ts";

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
 * to do. Loans that keep failing stop the loop rather than spin.
 */
export async function sweepDueLoans(
  { db, writer, clock }: Pick<VerbDeps, "db" | "writer" | "clock">,
  { tenantId, maxPages = MAX_PAGES }: { tenantId?: string; maxPages?: number } = {},
): Promise<SweepReport> {
  const systemNow = clock.now();
  const report: SweepReport = { visited: 0, failed: 0 };
  const failedIds = new Set<string>();
  for (let page = 0; page < maxPages; page++) {
    const due = (await findLoansToSweep(db, systemNow, tenantId)).filter((l) => !failedIds.has(l.loanId));
    if (due.length === 0) return report;
    const results = await Promise.allSettled(due.map((l) => writer.run({ kind: "sweep", tenantId: l.tenantId, loanId: l.loanId })));
    results.forEach((r, i) => r.status === "rejected" && failedIds.add(due[i]!.loanId));
    report.visited += due.length;
    report.failed = failedIds.size;
    if (due.length < SWEEP_PAGE && failedIds.size === 0) return report;
  }
  report.more = true;
  return report;
}

/**
 * Approved loans still waiting to be funded (no liquidity before, a failed
 * transfer, or a run cut off after reserving), oldest first. A loan whose own
 * request is still at work is safe to touch: its writer queues this behind
 * that request, and processing a funded loan does nothing.
 */
export async function retryFunding({ db, writer }: Pick<VerbDeps, "db" | "writer">, input: { tenantId?: string; limit?: number } = {}): Promise<SweepReport> {
  const rows = await db
    .select({ tenantId: loans.tenantId, loanId: loans.id })
    .from(loans)
    .where(
      and(
        inArray(loans.fundingState, ["AWAITING_LIQUIDITY", "RESERVED", "NONE"]),
        eq(loans.status, "CREATED"),
        eq(loans.decisionOutcome, "APPROVED"),
        input.tenantId ? eq(loans.tenantId, input.tenantId) : undefined,
      ),
    )
    .orderBy(asc(loans.createdAt), asc(loans.id))
    .limit(input.limit ?? SWEEP_PAGE);
  // Oldest first, one at a time: the first loans get the returning liquidity.
  const errors: { loanId: string; error: string }[] = [];
  for (const r of rows) errors.push(...(await runAll(writer, [{ kind: "process", tenantId: r.tenantId, loanId: r.loanId }])).errors);
  return { visited: rows.length, failed: errors.length, ...(errors.length > 0 ? { errors: errors.slice(0, MAX_REPORTED_ERRORS) } : {}) };
}
