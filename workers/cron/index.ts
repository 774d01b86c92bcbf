import { errorBodyForStatus } from "../../shared/domain/errors.ts";
import type { CronEnv } from "./env.ts";
import { JOBS } from "./jobs.ts";
import { runJobs } from "./run-jobs.ts";

export default {
  async scheduled(controller, env) {
    await runJobs(JOBS, env, { cron: controller.cron, scheduledTime: controller.scheduledTime });
  },
  /** Not publicly routed (workers_dev = false); the local stack polls it. */
  async fetch(request) {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/health") {
      return Response.json({ status: "ok", service: "cron" });
    }
    return Response.json(errorBodyForStatus(404, `No route for ${request.method} ${url.pathname}`), { status: 404 });
  },
} satisfies ExportedHandler<CronEnv>;
