import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createHealthApp } from "../../shared/http/health-app.ts";
import type { CronEnv } from "./env.ts";
import { JOBS } from "./jobs.ts";
import { runJobs } from "./run-jobs.ts";

/** Not publicly routed (workers_dev = false); the local stack polls it. */
const app = createHealthApp("cron");

export default {
  async scheduled(controller, env) {
    await runJobs(JOBS, withChaos(env, "cron"), { cron: controller.cron, scheduledTime: controller.scheduledTime });
  },
  fetch: app.fetch,
} satisfies ExportedHandler<CronEnv>;
