import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { durableLoanWriter } from "../../../shared/loans/durable-loan-writer.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { RETRY_PAGES_PER_RUN, retryFunding } from "../../../shared/sweeps/run-sweeps.ts";
import type { CronJob } from "../job.ts";

/** Funds approved loans that are still waiting: liquidity returned, or a run was cut off. */
export const retryFundingJob: CronJob = {
  name: "retry-funding",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const report = await retryFunding(
      { db: createDb(tenantDatabase(env)), writer: durableLoanWriter(env.LOANS), clock: systemClock },
      { maxPages: RETRY_PAGES_PER_RUN },
    );
    if (report.visited > 0) log.info("funding retried", report);
    return { more: report.more === true };
  },
};
