import type { CronEnv } from "./env.ts";
import { consoleLogger, safeErrorFields, type Logger } from "../../shared/observability/logger.ts";
import type { CronJob } from "./job.ts";

/**
 * Runs every job registered for the trigger's cron. Jobs are independent: one
 * failing does not stop the others, but the invocation still fails so the
 * runtime reports it.
 */
export async function runJobs(
  jobs: readonly CronJob[],
  env: CronEnv,
  trigger: { cron: string; scheduledTime: number },
  log: Logger = consoleLogger,
): Promise<void> {
  const due = jobs.filter((job) => job.crons.includes(trigger.cron));
  const results = await Promise.allSettled(due.map((job) => job.run({ env, ...trigger, log })));
  const failed = results.flatMap((result, i) => (result.status === "rejected" ? [{ job: due[i]!.name, reason: result.reason }] : []));
  for (const { job, reason } of failed) {
    log.error("cron job failed", { job, cron: trigger.cron, ...safeErrorFields(reason) });
  }
  if (failed.length > 0) throw new Error(`cron jobs failed: ${failed.map((f) => f.job).join(", ")}`);
}
