import type { CronJob } from "./job.ts";
import { gasAlertsJob } from "./jobs/gas-alerts.ts";
import { heartbeat } from "./jobs/heartbeat.ts";
import { relayOutboxJob } from "./jobs/relay-outbox.ts";
import { retentionJob } from "./jobs/retention.ts";
import { retryFundingJob } from "./jobs/retry-funding.ts";
import { settlementListenerJob } from "./jobs/settlement-listener.ts";
import { sweepLoansJob } from "./jobs/sweep-loans.ts";

/** Every scheduled task of the cron worker. */
export const JOBS: readonly CronJob[] = [heartbeat, settlementListenerJob, sweepLoansJob, retryFundingJob, gasAlertsJob, relayOutboxJob, retentionJob];
