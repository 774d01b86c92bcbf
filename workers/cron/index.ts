import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createHealthApp } from "../../shared/http/health-app.ts";
import { consoleLogger } from "../../shared/observability/logger.ts";
import { consumeCronDeadLetters, consumeCronJobs } from "./consume-jobs.ts";
import { CRON_JOBS_DLQ, type CronJobMessage } from "./cron-messages.ts";
import { dispatchJobs } from "./dispatch.ts";
import type { CronEnv } from "./env.ts";
import { JOBS } from "./jobs.ts";
import { localTickResponse, tickDispatched, tickKey } from "./local-ticks.ts";

/** Not publicly routed (workers_dev = false); the local stack polls it. */
const app = createHealthApp("cron");

export default {
  /** A dispatcher: each due job goes to the jobs queue, to run in its own invocation (dispatch.ts). */
  async scheduled(controller, env) {
    const trigger = { cron: controller.cron, scheduledTime: controller.scheduledTime };
    const due = await dispatchJobs(JOBS, env.CRON_JOBS, trigger);
    if (env.ENVIRONMENT === "development") tickDispatched(tickKey(trigger.cron, trigger.scheduledTime), due.length);
  },
  async queue(batch, env) {
    if (batch.queue === CRON_JOBS_DLQ) consumeCronDeadLetters(batch, consoleLogger);
    else await consumeCronJobs(batch, withChaos(env, "cron"), JOBS, consoleLogger);
  },
  fetch(request, env, ctx) {
    // Locally, workers/local/stack.ts asks which of a tick's jobs have run (local-ticks.ts).
    const tick = env.ENVIRONMENT === "development" ? localTickResponse(request) : null;
    return tick ?? app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<CronEnv, CronJobMessage>;
