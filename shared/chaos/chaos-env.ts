import { chaosFromEnv, type ChaosVars, type FaultSite } from "./faults.ts";
import { faultyD1 } from "./faulty-d1.ts";
import { faultyQueue } from "./faulty-queue.ts";

type ChaosTargets = ChaosVars & { DB?: D1Database; WEBHOOK_DELIVERIES?: Queue<unknown> };

/**
 * The worker's env with the faults its vars ask for (development only): the
 * D1 binding and the deliveries Queue producer wrapped. Without CHAOS_* vars,
 * or outside development, the env itself.
 */
export function withChaos<E extends ChaosTargets>(env: E, site: FaultSite): E {
  const chaos = chaosFromEnv(env);
  const applies = (policy?: { sites?: FaultSite[] }) => policy !== undefined && (!policy.sites || policy.sites.includes(site));
  if (!applies(chaos.d1) && !applies(chaos.queue)) return env;
  const out = { ...env };
  if (applies(chaos.d1) && env.DB) out.DB = faultyD1(env.DB, chaos.d1!);
  if (applies(chaos.queue) && env.WEBHOOK_DELIVERIES) out.WEBHOOK_DELIVERIES = faultyQueue(env.WEBHOOK_DELIVERIES, chaos.queue!);
  return out;
}

/** Whether a loan object resets (chaos) right after this command committed. */
export function resetsAfterCommit(env: ChaosVars, random: () => number = Math.random): boolean {
  const rate = chaosFromEnv(env).doResetRate;
  return rate !== undefined && random() < rate;
}
