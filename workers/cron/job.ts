import type { Logger } from "../../shared/observability/logger.ts";
import type { CronEnv } from "./env.ts";

export type JobInput = {
  env: CronEnv;
  /** The trigger's expression, e.g. `* * * * *`. */
  cron: string;
  /** When the trigger was due (ms since epoch), as the runtime reports it. */
  scheduledTime: number;
  log: Logger;
  /** 0 for the tick's own run; n for the n-th continuation (budget.ts). */
  continuation?: number;
};

/** `more`: the run stopped at its cap with work left (budget.ts): the queue handler may continue it. */
export type JobResult = { more?: boolean };

/** A scheduled task: one module under workers/cron/jobs/ exports one of these. */
export type CronJob = {
  name: string;
  /** The cron expressions (from wrangler.toml `[triggers]`) that run this job. */
  crons: readonly string[];
  run(input: JobInput): Promise<JobResult | undefined>;
};
