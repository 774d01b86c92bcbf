import { DurableObject } from "cloudflare:workers";
import { createDb } from "../../db/create-db.ts";
import { type ChainPortEnv, chainPortFromEnv } from "../chains/chain-port-from-env.ts";
import { resetsAfterCommit, withChaos } from "../chaos/chaos-env.ts";
import type { ChaosVars } from "../chaos/faults.ts";
import { systemClock } from "../domain/clock.ts";
import { newRoundTripCounter, type RoundTripVars, totalRoundTrips, withRoundTripCount } from "../observability/round-trips.ts";
import { executeLoanCommand, keyedMutex, type LoanCommand, type LoanCommandResult } from "./loan-commands.ts";

type LoanObjectEnv = ChainPortEnv & ChaosVars & RoundTripVars & { DB: D1Database };

/**
 * One Durable Object per loan: its single writer (STYLE.md). RPC calls can
 * interleave at every await on D1, so commands also queue behind each other
 * here; each one commits through the loan's write token. Exported from the
 * api worker's entry; the cron worker binds it by `script_name`.
 */
export class LoanObject extends DurableObject<LoanObjectEnv> {
  private readonly withLock = keyedMutex();

  async run(cmd: LoanCommand): Promise<LoanCommandResult> {
    const chaotic = withChaos(this.env, "loans");
    // The bench (development only): this command's D1 round trips and Durable Object calls go back with its result.
    const counter = newRoundTripCounter();
    const env = withRoundTripCount(chaotic, counter) ?? chaotic;
    const db = createDb(env.DB);
    const result = await this.withLock("loan", () => executeLoanCommand({ db, chain: chainPortFromEnv(env, db), clock: systemClock }, cmd));
    // Chaos (development only): the object resets after its commit, before its reply.
    if (resetsAfterCommit(this.env)) this.ctx.abort("chaos: Durable Object reset after commit");
    return env === chaotic ? result : { ...result, roundTrips: totalRoundTrips(counter) };
  }
}
