import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { sweepDueLoans } from "../../../shared/sweeps/run-sweeps.ts";
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
    const report = await sweepDueLoans(
      { db: createDb(tenantDatabase(env)), writer: durableLoanWriter(env.LOANS), clock: systemClock },
      { maxPages: SWEEP_PAGES_PER_RUN },
    );
    if (report.visited > 0) log.info("loans swept", report);
    return { more: report.more === true };
  },
};
