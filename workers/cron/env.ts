/** Bindings and vars of the cron worker (workers/cron/wrangler.toml). */
export type CronEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
};
