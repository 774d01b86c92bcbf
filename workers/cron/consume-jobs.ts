import { type Logger, safeErrorFields } from "../../shared/observability/logger.ts";
import { MAX_CONTINUATIONS } from "./budget.ts";
import type { CronJobMessage } from "./cron-messages.ts";
import type { CronEnv } from "./env.ts";
import type { CronJob } from "./job.ts";
import { tickContinued, tickJobSettled, tickKey } from "./local-ticks.ts";

/**
 * The jobs queue's consumer: runs the job a message names (one message per
 * batch). A run that stopped at its cap with work left enqueues its
 * continuation, up to MAX_CONTINUATIONS per job and tick; past that, the next
 * tick goes on. A job that throws is retried by the Queue (max_retries, 30 s
 * apart), then dead-lettered; every job is safe to run again or overlap with
 * the next tick's run (each works from the database's state, idempotently).
 */
export async function consumeCronJobs(batch: MessageBatch<CronJobMessage>, env: CronEnv, jobs: readonly CronJob[], log: Logger): Promise<void> {
  const local = env.ENVIRONMENT === "development";
  for (const message of batch.messages) {
    const { job: name, cron, scheduledTime, continuation } = message.body;
    const key = tickKey(cron, scheduledTime);
    const job = jobs.find((j) => j.name === name);
    if (!job) {
      // Sent by a version of the worker that had this job: nothing to run.
      log.error("unknown cron job", { job: name, cron });
      message.ack();
      if (local) tickJobSettled(key, name, false);
      continue;
    }
    const firstTry = message.attempts === 1;
    try {
      const result = await job.run({ env, cron, scheduledTime, log, continuation });
      if (result?.more && continuation < MAX_CONTINUATIONS) {
        if (local) tickContinued(key);
        await env.CRON_JOBS.send({ job: name, cron, scheduledTime, continuation: continuation + 1 });
      } else if (result?.more) {
        log.info("cron job left work for the next tick", { job: name, continuation });
      }
      message.ack();
      if (local && firstTry) tickJobSettled(key, name, true);
    } catch (err) {
      log.error("cron job failed", { job: name, cron, continuation, attempts: message.attempts, ...safeErrorFields(err) });
      message.retry({ delaySeconds: 30 });
      if (local && firstTry) tickJobSettled(key, name, false);
    }
  }
}

/**
 * The jobs queue's dead letters: a job that failed on every try. Nothing is
 * lost with it (the next tick dispatches the job again, and each job picks
 * up from the database's state); the dead letter is logged at error level so
 * an operator sees a job that keeps failing.
 */
export function consumeCronDeadLetters(batch: MessageBatch<CronJobMessage>, log: Logger): void {
  for (const message of batch.messages) {
    log.error("cron job dead-lettered", { ...message.body, messageId: message.id, next: "the next tick runs it again" });
    message.ack();
  }
}
