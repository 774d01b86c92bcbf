import type { CronJobMessage } from "./cron-messages.ts";
import type { CronJob } from "./job.ts";

/**
 * The scheduled handler's whole work: one message per job due at this
 * trigger on the cron worker's jobs queue (max_batch_size = 1), so each job
 * runs in an invocation of its own, with its own subrequests, queries and
 * CPU time, and a slow or failing job holds up no other. The messages go in
 * list order; deployed, the jobs run concurrently, so events a job writes
 * this tick may be relayed on the next one (a minute later) unless the api
 * relayed them already; locally the queue runs one batch at a time, in order.
 */
export async function dispatchJobs(
  jobs: readonly CronJob[],
  queue: { sendBatch(messages: { body: CronJobMessage }[]): Promise<unknown> },
  trigger: { cron: string; scheduledTime: number },
): Promise<string[]> {
  const due = jobs.filter((job) => job.crons.includes(trigger.cron)).map((job) => job.name);
  // A Queue batch takes at most 100 messages; the worker has a handful of jobs.
  if (due.length > 0) await queue.sendBatch(due.map((job) => ({ body: { job, cron: trigger.cron, scheduledTime: trigger.scheduledTime, continuation: 0 } })));
  return due;
}
