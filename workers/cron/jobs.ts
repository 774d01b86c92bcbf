import type { CronJob } from "./job.ts";
import { gasAlertsJob } from "./jobs/gas-alerts.ts";
import { heartbeat } from "./jobs/heartbeat.ts";
import { liveSettlementListenerJob } from "./jobs/live-settlement-listener.ts";
import { recoverDeliveriesJob } from "./jobs/recover-deliveries.ts";
import { relayOutboxJob } from "./jobs/relay-outbox.ts";
import { retentionJob } from "./jobs/retention.ts";
import { retryFundingJob } from "./jobs/retry-funding.ts";
import { settlementListenerJob } from "./jobs/settlement-listener.ts";
import { sweepLoansJob } from "./jobs/sweep-loans.ts";

/**
 * Every scheduled task of the cron worker, each dispatched to an invocation
 * of its own (dispatch.ts), in this order (the relay after the jobs that
 * write events, so locally, where the queue runs them in turn, their events
 * go out in the same tick; retention last, as nothing waits on it).
 */
export const JOBS: readonly CronJob[] = [
  heartbeat,
  settlementListenerJob,
  liveSettlementListenerJob,
  sweepLoansJob,
  retryFundingJob,
  gasAlertsJob,
  relayOutboxJob,
  recoverDeliveriesJob,
  retentionJob,
];
