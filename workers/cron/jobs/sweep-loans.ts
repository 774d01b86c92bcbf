import { createDb } from "../../../db/create-db.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { sweepDueLoans } from "../../../shared/sweeps/run-sweeps.ts";
import type { CronJob } from "../job.ts";

/** SPEC.md "Overdue and default": overdue, late fees per started day, default after grace. */
export const sweepLoansJob: CronJob = {
  name: "sweep-loans",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const report = await sweepDueLoans({ db: createDb(env.DB), writer: durableLoanWriter(env.LOANS), clock: systemClock });
    if (report.visited > 0) log.info("loans swept", report);
  },
};
