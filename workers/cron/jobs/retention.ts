import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { DEFAULT_RETENTION_DAYS, MIN_RETENTION_DAYS, purgeHistory } from "../../../shared/retention/purge-history.ts";
import type { CronEnv } from "../env.ts";
import type { CronJob } from "../job.ts";

/**
 * RETENTION_DAYS as a whole number of days, DEFAULT_RETENTION_DAYS when
 * unset. Anything else, or fewer than MIN_RETENTION_DAYS, fails the job
 * (nothing is deleted) rather than guessing what was meant.
 */
export function retentionDays(env: Pick<CronEnv, "RETENTION_DAYS">): number {
  const raw = env.RETENTION_DAYS?.trim();
  if (raw === undefined || raw === "") return DEFAULT_RETENTION_DAYS;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < MIN_RETENTION_DAYS) {
    throw new Error(`RETENTION_DAYS must be a whole number of days, at least ${MIN_RETENTION_DAYS}; got "${raw}"`);
  }
  return Number(raw);
}

/**
 * README "Retention": removes history older than RETENTION_DAYS (relayed
 * events with their notifications, finished deliveries and attempts; expired
 * wallet challenges and verification links), a bounded number per run. Last
 * in the list: nothing waits on it.
 */
export const retentionJob: CronJob = {
  name: "retention",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const report = await purgeHistory({ db: createDb(tenantDatabase(env)) }, { now: systemClock.now(), retentionDays: retentionDays(env) });
    if (Object.values(report).some((n) => n > 0)) log.info("history purged", report);
  },
};
