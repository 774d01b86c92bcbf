import { DurableObject } from "cloudflare:workers";
import { tenantDatabase } from "../../db/databases.ts";
import { createDb } from "../../db/create-db.ts";
import { type ChainPortEnv, chainPortFromEnv } from "../chains/chain-port-from-env.ts";
import { resetsAfterCommit, withChaos } from "../chaos/chaos-env.ts";
import type { ChaosVars } from "../chaos/faults.ts";
import { systemClock } from "../domain/clock.ts";
import { countRoundTrips, newRoundTripCounter, type RoundTripVars, totalRoundTrips, withRoundTripCount } from "../observability/round-trips.ts";
import { executeLoanCommand, keyedMutex, type LoanCommand, type LoanCommandResult } from "./loan-commands.ts";
import type { LoanContext } from "./loan-context.ts";

type LoanObjectEnv = ChainPortEnv & ChaosVars & RoundTripVars & { DB: D1Database };

const contexts = new WeakMap<LoanObjectEnv, LoanContext>();

/** The commands' deps, built once per env object (a chaos env, made per call, gets its own). */
function contextFor(env: LoanObjectEnv): LoanContext {
  let deps = contexts.get(env);
  if (!deps) {
    // A loan's rows are its tenant's; with shards, the object takes the database of its commands' tenantId.
    const db = createDb(tenantDatabase(env));
    deps = { db, chain: chainPortFromEnv(env, db), clock: systemClock };
    contexts.set(env, deps);
  }
  return deps;
}

/**
 * The single writer of the loans it is named for (STYLE.md): one of each
 * tenant's `LOAN_SHARDS` objects, every command of a loan reaching the same
 * one (`loanObjectName`, durable-loan-writer.ts). RPC calls can interleave at
 * every await on D1, so a loan's commands queue behind each other here (other
 * loans' run alongside); each one commits through the loan's write token.
 * Exported from the api worker's entry; the cron and embed workers bind it by
 * `script_name`.
 */
export class LoanObject extends DurableObject<LoanObjectEnv> {
  private readonly withLock = keyedMutex();

  async run(cmd: LoanCommand): Promise<LoanCommandResult> {
    const chaotic = withChaos(this.env, "loans");
    // The bench (development only): this command's D1 round trips and Durable Object calls go back with its result.
    const counted = withRoundTripCount(chaotic);
    const deps = contextFor(counted ?? chaotic);
    const counter = newRoundTripCounter();
    const execute = () => this.withLock(cmd.loanId, () => executeLoanCommand(deps, cmd));
    const result = counted ? await countRoundTrips(counter, execute) : await execute();
    // Chaos (development only): the object resets after its commit, before its reply.
    if (resetsAfterCommit(this.env)) this.ctx.abort("chaos: Durable Object reset after commit");
    return counted ? { ...result, roundTrips: totalRoundTrips(counter) } : result;
  }
}
