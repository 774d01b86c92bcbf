import { and, asc, eq, lt, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans } from "../../db/schema/loans.ts";
import { chainCursors, sandboxLedgers } from "../../db/schema/settlement-tracking.ts";
import { chainConfig } from "../chains/chain-config.ts";
import { MAX_STORABLE_UNITS } from "../domain/money.ts";
import type { Chain } from "../domain/rails.ts";
import { classifyTransaction, type Observation } from "./classify-transaction.ts";
import { recordUnmatched } from "./unmatched.ts";
import type { VerbDeps } from "../verbs.ts";

export const LISTENER_PAGE = 100;

/** A quiet sandbox ledger is polled again this long after its last poll (a safety net behind the helpers' own polls). */
export const LEDGER_REPOLL_MS = 60 * 60 * 1000;

export type ListenerDeps = Pick<VerbDeps, "db" | "chain" | "writer" | "clock">;
export type ListenerReport = {
  chain: Chain;
  sandboxTenantId: string | null;
  transactions: number;
  payments: number;
  failures: number;
  unmatched: number;
  lastBlock: number;
};

/** A ledger's poll: also the pages it read, and `more` when it stopped at its page cap with transactions left. */
export type LedgerPollReport = ListenerReport & { pages: number; more: boolean };

/** One ledger: a live chain (everyone's), or a sandbox tenant's ledger of a simulated chain. */
type Ledger = { chain: Chain; sandboxTenantId: string | null };

async function cursorOf(db: Db, { chain, sandboxTenantId }: Ledger): Promise<number> {
  const [row] = sandboxTenantId
    ? await db
        .select({ lastBlock: sandboxLedgers.lastBlock })
        .from(sandboxLedgers)
        .where(and(eq(sandboxLedgers.tenantId, sandboxTenantId), eq(sandboxLedgers.chain, chain)))
    : await db.select({ lastBlock: chainCursors.lastBlock }).from(chainCursors).where(eq(chainCursors.chain, chain));
  return row?.lastBlock ?? 0;
}

/**
 * Moves the cursor forward only: an overlapping run that finished earlier
 * never moves it back. A sandbox ledger's poll also puts its next cron poll
 * an hour out, unless a helper wrote to it since this poll started.
 */
async function saveCursor(db: Db, { chain, sandboxTenantId }: Ledger, block: number, startedAt: Date, now: Date, stillDue = false) {
  if (sandboxTenantId) {
    // A ledger left with a backlog (the run hit its page cap) stays due, behind those waiting longer.
    const next = stillDue ? now : new Date(startedAt.getTime() + LEDGER_REPOLL_MS);
    await db
      .insert(sandboxLedgers)
      .values({ tenantId: sandboxTenantId, chain, lastBlock: block, pollAfter: next, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [sandboxLedgers.tenantId, sandboxLedgers.chain],
        set: {
          lastBlock: sql`MAX(${sandboxLedgers.lastBlock}, excluded.last_block)`,
          // A write marked at or after this poll's start may have landed after its read: it stays due.
          pollAfter: sql`CASE WHEN ${sandboxLedgers.pollAfter} < ${startedAt.getTime()} THEN excluded.poll_after ELSE ${sandboxLedgers.pollAfter} END`,
          updatedAt: now,
        },
      });
    return;
  }
  await db
    .insert(chainCursors)
    .values({ chain, lastBlock: block, updatedAt: now })
    .onConflictDoUpdate({
      target: chainCursors.chain,
      set: { lastBlock: sql`MAX(${chainCursors.lastBlock}, excluded.last_block)`, updatedAt: now },
    });
}

/**
 * Registers a sandbox tenant's ledger of a chain and makes it due for the
 * cron's poll now. The sandbox helpers call it before they write to the
 * ledger: should their own poll afterwards never run, the cron job's does.
 * Returns the tenant's sandbox clock offset as it is now, read in the same
 * statement (the request's principal read it earlier: a clock advance since
 * then would stamp the write before the time the sweep has already judged).
 */
export async function markLedgerWritten(
  { db }: Pick<VerbDeps, "db">,
  { sandboxTenantId, chain, now }: { sandboxTenantId: string; chain: Chain; now: Date },
): Promise<{ clockOffsetMs: number }> {
  const [row] = await db
    .insert(sandboxLedgers)
    .values({ tenantId: sandboxTenantId, chain, lastBlock: 0, pollAfter: now, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [sandboxLedgers.tenantId, sandboxLedgers.chain], set: { pollAfter: now, updatedAt: now } })
    .returning({ clockOffsetMs: sql<number>`(SELECT clock_offset_ms FROM tenants WHERE id = ${sandboxTenantId})` });
  return { clockOffsetMs: Number(row?.clockOffsetMs ?? 0) };
}

/** How long the cron leaves a sandbox ledger whose poll threw before it polls it again. */
export const FAILED_LEDGER_RETRY_MS = 5 * 60_000;

/**
 * A sandbox ledger whose poll (begun at `startedAt`) threw waits
 * FAILED_LEDGER_RETRY_MS before the cron's next poll, unless a helper wrote
 * to it since the poll began (then it is due as marked, as `saveCursor`
 * judges it). Its cursor stays; before, it also kept its place at the head
 * of the line, and 100 such ledgers stopped the cron from polling any other.
 */
export async function deferFailedLedger(
  { db }: Pick<VerbDeps, "db">,
  { sandboxTenantId, chain, startedAt, now }: { sandboxTenantId: string; chain: Chain; startedAt: Date; now: Date },
) {
  await db
    .update(sandboxLedgers)
    .set({ pollAfter: new Date(now.getTime() + FAILED_LEDGER_RETRY_MS), updatedAt: now })
    .where(and(eq(sandboxLedgers.tenantId, sandboxTenantId), eq(sandboxLedgers.chain, chain), lt(sandboxLedgers.pollAfter, startedAt)));
}

/** The sandbox ledgers due for a poll at `now`, longest waiting first, at most `limit` (one range of the poll_after index). */
export const ledgersToPoll = (db: Db, now: Date, limit: number) =>
  db
    .select({ sandboxTenantId: sandboxLedgers.tenantId, chain: sandboxLedgers.chain })
    .from(sandboxLedgers)
    .where(lte(sandboxLedgers.pollAfter, now))
    .orderBy(asc(sandboxLedgers.pollAfter))
    .limit(limit);

/** Sends one observation to its loan's writer, or keeps it as unmatched. */
async function handle(deps: ListenerDeps, ledger: Ledger, obs: Observation, report: ListenerReport) {
  const now = deps.clock.now();
  // On a sandbox ledger everything belongs to its tenant, whichever call made it.
  const keptFor = ledger.sandboxTenantId ?? obs.sandboxTenantId;
  if (obs.amount > MAX_STORABLE_UNITS) {
    // More than a row can hold (a faucet called thousands of times): kept as money received of 0, never applied. It
    // threw on every poll before, and the ledger stayed first in the cron's line for good (as the live listeners, which
    // already did this).
    if (obs.kind === "payment") {
      report.unmatched++;
      // Not attributable (settles: false): an attribution would spend the only record of it and credit 0 (review).
      await recordUnmatched(deps, { payment: { ...obs, amount: 0n }, reason: "the amount is more than can be stored", tenantId: keptFor, now, settles: false });
    }
    return;
  }
  if (!obs.loanId) {
    if (obs.kind === "payment") {
      report.unmatched++;
      await recordUnmatched(deps, {
        payment: obs,
        reason: obs.comment === null ? "no loan reference (missing comment or loan id)" : "the comment is not svc:repay:<loanId>",
        tenantId: keptFor,
        now,
      });
    }
    return;
  }
  const [found] = await deps.db.select({ tenantId: loans.tenantId, chain: loans.chain }).from(loans).where(eq(loans.id, obs.loanId)).limit(1);
  // A tenant's sandbox ledger pays only that tenant's loans: another tenant's loan is, to it, no loan at all.
  const loan = found && (!ledger.sandboxTenantId || found.tenantId === ledger.sandboxTenantId) ? found : undefined;
  if (!loan || loan.chain !== obs.chain) {
    if (obs.kind === "payment") {
      report.unmatched++;
      await recordUnmatched(deps, {
        payment: obs,
        reason: loan ? `the loan is on ${loan.chain}, not ${obs.chain}` : "no loan with this id",
        tenantId: loan ? loan.tenantId : keptFor,
        now,
      });
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
 * The settlement listener for one ledger: a live chain, or (with
 * `sandboxTenantId`) that sandbox tenant's ledger of a simulated chain. Reads
 * the transactions after the saved cursor, applies what they mean
 * (classifyTransaction), and saves the cursor. Idempotent per transaction:
 * each payment is applied in its loan's writer, which skips a (tx, log) it
 * has settled before, and unmatched payments are kept once. So restarts,
 * overlapping runs and duplicate polls never credit twice. `maxPages` bounds
 * one run (the cron's budget): a ledger left with a backlog stays due.
 */
export async function pollChain(
  deps: ListenerDeps,
  { chain, sandboxTenantId, maxPages = Number.POSITIVE_INFINITY }: { chain: Chain; sandboxTenantId: string | null; maxPages?: number },
): Promise<LedgerPollReport> {
  const ledger: Ledger = { chain, sandboxTenantId };
  // A live EVM chain needs its COLLECTIONS wallets, confirmations and reorg handling: evm-listener.ts.
  if (!sandboxTenantId && chainConfig(chain).family === "EVM" && !chainConfig(chain).simulated) {
    throw new RangeError(`${chain} is a live EVM chain: poll it with pollEvmChain (shared/settlement/evm-listener.ts)`);
  }
  const startedAt = deps.clock.now();
  const report: LedgerPollReport = {
    chain,
    sandboxTenantId,
    transactions: 0,
    payments: 0,
    failures: 0,
    unmatched: 0,
    lastBlock: await cursorOf(deps.db, ledger),
    pages: 0,
    more: false,
  };
  const scope = sandboxTenantId ? { sandboxTenantId } : undefined;
  for (;;) {
    const { transactions } = await deps.chain.readTransactions(chain, report.lastBlock, LISTENER_PAGE, scope);
    for (const tx of transactions) {
      for (const obs of classifyTransaction(tx)) await handle(deps, ledger, obs, report);
      report.lastBlock = Math.max(report.lastBlock, tx.blockNumber);
    }
    report.transactions += transactions.length;
    report.pages++;
    const full = transactions.length === LISTENER_PAGE;
    report.more = full && report.pages >= maxPages;
    // A sandbox ledger records every poll (its next cron poll); a live cursor only moves.
    if (transactions.length > 0 || sandboxTenantId) await saveCursor(deps.db, ledger, report.lastBlock, startedAt, deps.clock.now(), report.more);
    if (!full || report.more) return report;
  }
}
