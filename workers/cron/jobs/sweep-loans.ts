import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { sweepDueLoans } from "../../../shared/sweeps/run-sweeps.ts";
import { unjudgedLiveLoans } from "../../../shared/sweeps/sweep-loans.ts";
import { SWEEP_PAGES_PER_RUN } from "../budget.ts";
import type { CronJob } from "../job.ts";

/**
 * SPEC.md "Overdue and default": overdue, late fees per started day, default
 * after grace. Bounded to SWEEP_PAGES_PER_RUN pages; a run that stops there
 * with loans still due is continued (budget.ts). The sandbox loans due on the
 * clocks of tenants that moved theirs come in the same page, from one query
 * (advancedDueLoansQuery), however many such tenants there are.
 */
export const sweepLoansJob: CronJob = {
  name: "sweep-loans",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const db = createDb(tenantDatabase(env));
    const report = await sweepDueLoans({ db, writer: durableLoanWriter(env.LOANS), clock: systemClock }, { maxPages: SWEEP_PAGES_PER_RUN });
    if (report.visited > 0) log.info("loans swept", report);
    // Live loans judged only as far as their chain is read: one far past due and still unjudged means a listener down or never run.
    for (const waiting of await unjudgedLiveLoans(db, systemClock.now())) {
      log.error("live loans past due wait for their chain's settlement listener to read past the deadline", {
        ...waiting,
        oldestDueAt: new Date(waiting.oldestDueAt).toISOString(),
      });
    }
    return { more: report.more === true };
  },
};
