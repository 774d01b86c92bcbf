/**
 * Messages on the cron worker's own queue (`svc-credit-cron-jobs`): the
 * scheduled handler sends one per due job, and the queue handler runs it,
 * each job in an invocation (and budget) of its own.
 */
export type CronJobMessage = {
  /** The job's name (CronJob.name). */
  job: string;
  /** The trigger that dispatched it (its tick: `cron` and `scheduledTime`). */
  cron: string;
  scheduledTime: number;
  /** 0 for the tick's run; n for the n-th continuation of a run that stopped at its cap. */
  continuation: number;
};

export const CRON_JOBS_QUEUE = "svc-credit-cron-jobs";
export const CRON_JOBS_DLQ = "svc-credit-cron-jobs-dlq";
