import type { CronJob } from "./job.ts";
import { heartbeat } from "./jobs/heartbeat.ts";

/** Every scheduled task of the cron worker. */
export const JOBS: readonly CronJob[] = [heartbeat];
