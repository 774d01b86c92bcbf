import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans } from "../../db/schema/loans.ts";
import { chainCursors } from "../../db/schema/settlement-tracking.ts";
import type { ChainPort } from "../chains/chain-port.ts";
import type { Clock } from "../domain/clock.ts";
import type { Chain } from "../domain/rails.ts";
import type { LoanWriter } from "../loans/loan-commands.ts";
import { classifyTransaction, type Observation } from "./classify-transaction.ts";
import { recordUnmatched } from "./unmatched.ts";

export const LISTENER_PAGE = 100;

export type ListenerDeps = { db: Db; chain: ChainPort; writer: LoanWriter; clock: Clock };
export type ListenerReport = { chain: Chain; transactions: number; payments: number; failures: number; unmatched: number; lastBlock: number };

async function cursorOf(db: Db, chain: Chain): Promise<number> {
  const [row] = await db.select({ lastBlock: chainCursors.lastBlock }).from(chainCursors).where(eq(chainCursors.chain, chain));
  return row?.lastBlock ?? 0;
}

/** Moves the cursor forward only: an overlapping run that finished earlier never moves it back. */
async function saveCursor(db: Db, chain: Chain, block: number, now: Date) {
  await db
    .insert(chainCursors)
    .values({ chain, lastBlock: block, updatedAt: now })
    .onConflictDoUpdate({
      target: chainCursors.chain,
      set: { lastBlock: sql`MAX(${chainCursors.lastBlock}, excluded.last_block)`, updatedAt: now },
    });
}

/** Sends one observation to its loan's writer, or keeps it as unmatched. */
async function handle(deps: ListenerDeps, obs: Observation, report: ListenerReport) {
  const now = deps.clock.now();
  if (!obs.loanId) {
    if (obs.kind === "payment") {
      report.unmatched++;
      await recordUnmatched(deps.db, obs, obs.comment === null ? "no loan reference (missing comment or loan id)" : "the comment is not svc:repay:<loanId>", obs.sandboxTenantId, now);
    }
    return;
  }
  const [loan] = await deps.db.select({ tenantId: loans.tenantId, chain: loans.chain }).from(loans).where(eq(loans.id, obs.loanId)).limit(1);
  if (!loan || loan.chain !== obs.chain) {
    if (obs.kind === "payment") {
      report.unmatched++;
      await recordUnmatched(deps.db, obs, loan ? `the loan is on ${loan.chain}, not ${obs.chain}` : "no loan with this id", loan ? loan.tenantId : obs.sandboxTenantId, now);
    }
    return;
  }
  if (obs.kind === "payment") report.payments++;
  else report.failures++;
  await deps.writer.run(
    obs.kind === "payment"
      ? { kind: "repayment", tenantId: loan.tenantId, loanId: obs.loanId, payment: obs }
      : { kind: "repaymentFailed", tenantId: loan.tenantId, loanId: obs.loanId, payment: obs },
  );
}

/**
 * The settlement listener for one chain: reads the transactions after the
 * saved cursor, applies what they mean (classifyTransaction), and saves the
 * cursor. Idempotent per transaction: each payment is applied in its loan's
 * writer, which skips a (tx, log) it has settled before, and unmatched
 * payments are kept once. So restarts, overlapping runs and duplicate polls
 * never credit twice.
 */
export async function pollChain(deps: ListenerDeps, chain: Chain): Promise<ListenerReport> {
  const report: ListenerReport = { chain, transactions: 0, payments: 0, failures: 0, unmatched: 0, lastBlock: await cursorOf(deps.db, chain) };
  for (;;) {
    const { transactions } = await deps.chain.readTransactions(chain, report.lastBlock, LISTENER_PAGE);
    for (const tx of transactions) {
      for (const obs of classifyTransaction(tx)) await handle(deps, obs, report);
      report.lastBlock = Math.max(report.lastBlock, tx.blockNumber);
    }
    report.transactions += transactions.length;
    if (transactions.length > 0) await saveCursor(deps.db, chain, report.lastBlock, deps.clock.now());
    if (transactions.length < LISTENER_PAGE) return report;
  }
}
