import type { CronJob } from "../job.ts";

/** Proves the trigger fires (locally and deployed); records nothing. */
export const heartbeat: CronJob = {
  name: "heartbeat",
  crons: ["* * * * *"],
  async run({ cron, scheduledTime, log }) {
    log.info("cron tick", { cron, scheduledTime: new Date(scheduledTime).toISOString() });
  },
};
