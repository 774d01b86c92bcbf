import { DurableObject } from "cloudflare:workers";
import { createDb } from "../../db/create-db.ts";
import { type ChainPortEnv, chainPortFromEnv } from "../chains/chain-port-from-env.ts";
import { systemClock } from "../domain/clock.ts";
import { executeLoanCommand, keyedMutex, type LoanCommand, type LoanCommandResult } from "./loan-commands.ts";

type LoanObjectEnv = ChainPortEnv & { DB: D1Database };

/**
 * One Durable Object per loan: its single writer (STYLE.md). RPC calls can
 * interleave at every await on D1, so commands also queue behind each other
 * here; each one commits through the loan's write token. Exported from the
 * api worker's entry; the cron worker binds it by `script_name`.
 */
export class LoanObject extends DurableObject<LoanObjectEnv> {
  private readonly withLock = keyedMutex();

  async run(cmd: LoanCommand): Promise<LoanCommandResult> {
    const db = createDb(this.env.DB);
    return this.withLock("loan", () => executeLoanCommand({ db, chain: chainPortFromEnv(this.env, db), clock: systemClock }, cmd));
  }
}
