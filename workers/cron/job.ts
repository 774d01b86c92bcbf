import type { Logger } from "../../shared/observability/logger.ts";
import type { CronEnv } from "./env.ts";

export type JobInput = {
  env: CronEnv;
  /** The trigger's expression, e.g. `* * * * *`. */
  cron: string;
  /** When the trigger was due (ms since epoch), as the runtime reports it. */
  scheduledTime: number;
  log: Logger;
};

/** A scheduled task: one module under workers/cron/jobs/ exports one of these. */
export type CronJob = {
  name: string;
  /** The cron expressions (from wrangler.toml `[triggers]`) that run this job. */
  crons: readonly string[];
  run(input: JobInput): Promise<void>;
};
