import type { CronEnv } from "./env.ts";
import { consoleLogger, safeErrorFields, type Logger } from "../../shared/observability/logger.ts";
import type { CronJob } from "./job.ts";

/**
 * Runs every job registered for the trigger's cron in this one invocation,
 * one after the other in list order. The deployed worker no longer does this
 * (its scheduled handler dispatches each job to its own invocation:
 * dispatch.ts); tests and tools that want a whole tick inline do, in list order (the outbox relay comes last, so events the other jobs wrote go
 * out in the same tick). Jobs are independent: one failing does not stop the
 * others, but the invocation still fails so the runtime reports it.
 */
export async function runJobs(
  jobs: readonly CronJob[],
  env: CronEnv,
  trigger: { cron: string; scheduledTime: number },
  log: Logger = consoleLogger,
): Promise<void> {
  const due = jobs.filter((job) => job.crons.includes(trigger.cron));
  const results: PromiseSettledResult<unknown>[] = [];
  for (const job of due) {
    try {
      results.push({ status: "fulfilled", value: await job.run({ env, ...trigger, log }) });
    } catch (reason) {
      results.push({ status: "rejected", reason });
    }
  }
  const failed = results.flatMap((result, i) => (result.status === "rejected" ? [{ job: due[i]!.name, reason: result.reason }] : []));
  for (const { job, reason } of failed) {
    log.error("cron job failed", { job, cron: trigger.cron, ...safeErrorFields(reason) });
  }
  if (failed.length > 0) throw new Error(`cron jobs failed: ${failed.map((f) => f.job).join(", ")}`);
}
