/**
 * The settlement listener of a live EVM chain (POLYGON, BASE; issue 13
 * item 4). Per poll:
 * 1. Reorgs first: the hashes it remembered (each block it credited from, and
 *    its cursor block) are compared with the chain's. From the lowest block
 *    whose hash changed, everything is orphaned: each repayment credited there
 *    is un-credited in its loan's writer (settlement REVERSED, the loan back to
 *    ACTIVE or DEFAULTED, `loan.repayment_reversed`), unmatched payments seen
 *    there are dropped, and the cursor goes back to the last block known good.
 * 2. Then it reads on from the cursor (evm-log-reader.ts: bounded
 *    `eth_getLogs` ranges, only blocks `confirmations` deep), classifies each
 *    transaction against the deployment's pool and token and the chain's
 *    verified COLLECTIONS wallets, remembers the hash of each block before
 *    crediting from it, and credits a repayment only when its `collections` is
 *    the loan's own tenant's verified COLLECTIONS wallet.
 * 3. Then it reads whole blocks behind the log cursor (its own cursor,
 *    `revertsScannedTo`, at most MAX_REVERT_SCAN_BLOCKS a poll) for reverted
 *    `repay` calls, which have no logs: one sent by the loan's borrower wallet
 *    is a failed repayment (a FAILED settlement, `loan.repayment_failed`).
 * A payment whose loan's writer fails is held (held_payments, held-payments.ts)
 * and tried again at later polls with a back-off, and the cursor moves on:
 * one payment that cannot be applied never holds back every other tenant's.
 * An RPC error or rate limit ends the poll with the cursor where it was and
 * backs off (chain_cursors.backoff_until, doubling per consecutive failure).
 * Everything is idempotent, as the sandbox listener is: a poll repeated,
 * overlapping or cut short credits nothing twice.
 */
import { and, asc, eq, gt, inArray, lt, sql } from "drizzle-orm";
import { BaseError, createPublicClient, getAddress, http, isAddressEqual } from "viem";
import { safeRpcReason, WrongChainError } from "../chains/evm/live/evm-broadcast-errors.ts";
import { chunk, IDS_PER_LIST } from "../../db/chunks.ts";
import type { Db } from "../../db/create-db.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { loans } from "../../db/schema/loans.ts";
import { chainBlocks, chainCursors, heldPayments, unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { type FailedRepaysInput, MAX_REVERT_SCAN_BLOCKS, MAX_REVERT_SCAN_LAG, readFailedRepays } from "../chains/evm/live/evm-failed-repays.ts";
import {
  type EvmReadClient,
  type EvmReadInput,
  type EvmReadResult,
  isRateLimited,
  readEvmBlockHashes,
  readEvmTransactions,
} from "../chains/evm/live/evm-log-reader.ts";
import type { ChainTransaction } from "../chains/chain-port.ts";
import { effectiveChainConfig, type LiveChain, type LiveChains, type LiveChainSettings } from "../chains/live/live-config.ts";
import { classifyTransaction, type Observation } from "./classify-transaction.ts";
import { collectionsOwners } from "./collections-wallets.ts";
import { applyOrHold, dueHeldPayments, type HeldPayment, type HeldReport } from "./held-payments.ts";
import { MAX_STORABLE_UNITS } from "../domain/money.ts";
import { LISTENER_PAGE, type ListenerDeps, type ListenerReport } from "./listener.ts";
import { recordUnmatched } from "./unmatched.ts";

/** How far below the cursor remembered blocks are kept and checked; a reorg deeper than this is not undone. */
export const REORG_WINDOW_BLOCKS = 1_024;
/** The first back-off after a failed poll; it doubles per consecutive failure up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 30_000;
export const BACKOFF_MAX_MS = 30 * 60_000;
/** Blocks one poll reads at most (25 `eth_getLogs` ranges): a listener far behind catches up over several ticks. */
export const MAX_BLOCKS_PER_POLL = 50_000;

/** What the listener reads a live EVM chain through (evmChainReader: viem over the chain's RPC). */
export type EvmChainReader = {
  read(input: EvmReadInput): Promise<EvmReadResult>;
  blockHashes(numbers: readonly number[]): Promise<Map<number, string | null>>;
  /** Reverted repay calls to a COLLECTIONS wallet in a range of blocks (evm-failed-repays.ts). */
  failedRepays(input: FailedRepaysInput): Promise<ChainTransaction[]>;
};

/** The reader of one live EVM chain through a viem PublicClient on its RPC URL. */
export const evmChainReader = (settings: LiveChainSettings, client: EvmReadClient): EvmChainReader => ({
  read: (input) => readEvmTransactions(settings, client, input),
  blockHashes: (numbers) => readEvmBlockHashes(client, numbers),
  failedRepays: (input) => readFailedRepays(settings, client, input),
});

export type EvmListenerReport = ListenerReport & {
  /** A reorg this poll undid: from which block, and how many payments it un-credited or dropped. */
  reorg: { fromBlock: number; reversed: number; unmatchedDropped: number } | null;
  /** Set when the poll did not run (backing off) or failed (the cursor stayed). */
  skipped?: string;
  error?: string;
  rateLimited?: boolean;
  /**
   * The search for reverted repayments failed this poll (its cursor stayed; it
   * is tried again next poll). It never holds up crediting: the chain does not
   * back off for it.
   */
  revertScanError?: string;
  /** Blocks the search skipped this poll, being more than MAX_REVERT_SCAN_LAG behind the log cursor (their failures are not reported). */
  revertScanSkipped?: number;
} & HeldReport;

/** The reason an error gives, without a node's request or RPC URL. */
const reasonOf = (error: unknown) =>
  error instanceof BaseError || error instanceof WrongChainError ? safeRpcReason(error) : error instanceof Error ? error.message : String(error);

/**
 * Applies one observation (`held.blockHash`: its block's hash as read), or
 * holds it when its loan's writer (or anything on the way) fails.
 */
const applyOrHoldLive = (deps: ListenerDeps, owners: Map<string, string[]>, held: HeldPayment, report: EvmListenerReport, retry = false) =>
  applyOrHold(deps.db, { chain: held.obs.chain as LiveChain, tenantId: null }, held, () => handleLive(deps, owners, held.obs, report), report, {
    now: () => deps.clock.now(),
    retry,
    reasonOf,
  });

/**
 * Tries the held payments of `chain` that are due again. Each one's block
 * hash is remembered again first, as a new read does before crediting: a
 * reorg that orphaned it since (even one a concurrent poll already undid,
 * dropping the held row) is then seen by the next poll, which un-credits
 * what this one applied; one whose block already reads differently is left
 * for that poll.
 */
async function retryHeld(deps: ListenerDeps, owners: Map<string, string[]>, chain: LiveChain, report: EvmListenerReport) {
  for (const held of await dueHeldPayments(deps.db, { chain, tenantId: null }, deps.clock.now())) {
    if (held.blockHash) {
      try {
        await rememberBlock(deps.db, chain, held.obs.blockNumber, held.blockHash, true, deps.clock.now());
      } catch {
        continue;
      }
    }
    await applyOrHoldLive(deps, owners, held, report, true);
  }
}

/** A failed poll's back-off: 30 s, 1 min, 2 min, … up to 30 min. */
export const backoffMs = (failures: number) => Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);

/**
 * One poll of a live EVM chain. `startBlock`: where a chain without a cursor
 * starts reading (the pool's deployment block; 0 reads from genesis).
 *
 * @example await pollEvmChain(deps, { settings, reader: evmChainReader(settings, createPublicClient({ transport: http(settings.rpcUrl) })) })
 */
export async function pollEvmChain(
  deps: ListenerDeps,
  input: { settings: LiveChainSettings; reader: EvmChainReader; startBlock?: number },
): Promise<EvmListenerReport> {
  const { settings } = input;
  const { db } = deps;
  const chain = settings.chain;
  const startedAt = deps.clock.now();
  const report: EvmListenerReport = {
    chain,
    sandboxTenantId: null,
    transactions: 0,
    payments: 0,
    failures: 0,
    unmatched: 0,
    lastBlock: input.startBlock ?? 0,
    reorg: null,
  };
  // One poll of a chain at a time: two at once could each undo or credit what the other is in the middle of.
  const lease = await takeLease(db, chain, report.lastBlock, startedAt);
  if (!lease) {
    report.skipped = "another poll of this chain is running";
    return report;
  }
  try {
    return await pollLeased(deps, input, report, lease);
  } catch (error) {
    if (!(error instanceof LeaseLost)) throw error;
    report.skipped = error.message;
    return report;
  } finally {
    await releaseLease(db, chain, lease);
  }
}

/** How long a poll holds its chain; renewed at every page, so only a poll that died holds it longer than a page. */
export const LEASE_MS = 5 * 60_000;

class LeaseLost extends Error {}

/** Takes the chain's lease (creating its cursor row at `startBlock` if there is none) unless a live poll holds it; its id, or null. */
async function takeLease(db: Db, chain: LiveChain, startBlock: number, now: Date): Promise<string | null> {
  const id = crypto.randomUUID();
  const leaseUntil = new Date(now.getTime() + LEASE_MS);
  const [row] = await db
    .insert(chainCursors)
    .values({ chain, lastBlock: startBlock, updatedAt: now, leaseId: id, leaseUntil })
    .onConflictDoUpdate({
      target: chainCursors.chain,
      set: { leaseId: id, leaseUntil },
      setWhere: sql`${chainCursors.leaseUntil} IS NULL OR ${chainCursors.leaseUntil} <= ${now.getTime()}`,
    })
    .returning({ leaseId: chainCursors.leaseId });
  return row?.leaseId === id ? id : null;
}

/** Holds the lease for another LEASE_MS; throws LeaseLost when it expired and another poll took it (this poll then stops where it is). */
async function renewLease(db: Db, chain: LiveChain, lease: string, now: Date) {
  const rows = await db
    .update(chainCursors)
    .set({ leaseUntil: new Date(now.getTime() + LEASE_MS) })
    .where(and(eq(chainCursors.chain, chain), eq(chainCursors.leaseId, lease)))
    .returning({ chain: chainCursors.chain });
  if (rows.length === 0) throw new LeaseLost("this poll outlived its lease and another poll took the chain; it stopped where it was");
}

async function releaseLease(db: Db, chain: LiveChain, lease: string) {
  await db
    .update(chainCursors)
    .set({ leaseId: null, leaseUntil: null })
    .where(and(eq(chainCursors.chain, chain), eq(chainCursors.leaseId, lease)));
}

/** The poll itself, under the chain's lease. */
async function pollLeased(
  deps: ListenerDeps,
  input: { settings: LiveChainSettings; reader: EvmChainReader; startBlock?: number },
  report: EvmListenerReport,
  lease: string,
): Promise<EvmListenerReport> {
  const { settings, reader } = input;
  const { db } = deps;
  const chain = settings.chain as LiveChain;
  const startedAt = deps.clock.now();
  const [state] = await db.select().from(chainCursors).where(eq(chainCursors.chain, chain));
  report.lastBlock = state?.lastBlock ?? report.lastBlock;
  if (state?.backoffUntil && state.backoffUntil.getTime() > startedAt.getTime()) {
    report.skipped = `backing off after ${state.failures} failed poll(s) until ${state.backoffUntil.toISOString()}`;
    return report;
  }
  try {
    const startOwners = await collectionsOwners(db, chain, startedAt);
    const config = effectiveChainConfig(chain, { [chain]: settings });
    report.reorg = await undoReorg(deps, reader, chain, report.lastBlock, input.startBlock ?? 0);
    // Where the search for reverted repay calls goes on from: a deployment before it starts at the log cursor.
    let revertsFrom = state?.revertsScannedTo ?? report.lastBlock;
    if (report.reorg) {
      report.lastBlock = report.reorg.fromBlock - 1;
      revertsFrom = Math.min(revertsFrom, report.lastBlock);
    }
    // Payments held by earlier polls, due again (their blocks are behind the cursor; a reorg above it dropped them).
    await retryHeld(deps, startOwners, chain, report);
    const stopAt = report.lastBlock + MAX_BLOCKS_PER_POLL;
    let owners = startOwners;
    for (;;) {
      const maxBlocks = stopAt - report.lastBlock;
      if (maxBlocks <= 0) break;
      await renewLease(db, chain, lease, deps.clock.now());
      // The wallets read anew for each page, whose blocks go up to the head as read now: a COLLECTIONS wallet verified
      // during a long poll was left out of its later pages, and a payment made to it as instructed was never read (the
      // address filter dropped it, the cursor moved past it, and the loan defaulted). A payment a page reads can only be
      // `confirmations` deep if it was mined, so instructed, so verified, before the wallets were read.
      owners = await collectionsOwners(db, chain, deps.clock.now());
      const collections = new Set(owners.keys());
      const read = await reader.read({ afterBlock: report.lastBlock, limit: LISTENER_PAGE, collections: [...collections], maxBlocks });
      for (const tx of read.transactions) {
        const observations = classifyTransaction(tx, { config, collections });
        // The block's hash is remembered before anything is credited from it, so a crash in between still leaves it checked.
        const blockHash = tx.family === "EVM" ? tx.blockHash : undefined;
        if (observations.length > 0) {
          if (!blockHash) throw new Error(`${tx.hash} has no block hash: a live block is never credited unremembered`);
          await rememberBlock(db, chain, tx.blockNumber, blockHash, true, deps.clock.now());
        }
        for (const obs of observations) await applyOrHoldLive(deps, owners, { obs, blockHash: blockHash ?? null }, report);
      }
      report.transactions += read.transactions.length;
      if (read.scannedTo <= report.lastBlock) break;
      report.lastBlock = read.scannedTo;
      await saveCursor(db, chain, read, deps.clock.now());
      if (read.transactions.length < LISTENER_PAGE && read.scannedTo >= read.head - settings.confirmations) break;
    }
    await renewLease(db, chain, lease, deps.clock.now());
    await searchReverts(deps, { reader, chain, owners, config, report, from: revertsFrom });
    await db.delete(chainBlocks).where(and(eq(chainBlocks.chain, chain), lt(chainBlocks.blockNumber, report.lastBlock - REORG_WINDOW_BLOCKS)));
    if (state && state.failures > 0) await db.update(chainCursors).set({ failures: 0, backoffUntil: null }).where(eq(chainCursors.chain, chain));
    return report;
  } catch (error) {
    if (error instanceof LeaseLost) throw error;
    const failures = (state?.failures ?? 0) + 1;
    const backoffUntil = new Date(startedAt.getTime() + backoffMs(failures));
    // The cursor is untouched: only the failure count and the back-off are written.
    await db
      .insert(chainCursors)
      .values({ chain, lastBlock: state?.lastBlock ?? input.startBlock ?? 0, updatedAt: startedAt, failures, backoffUntil })
      .onConflictDoUpdate({ target: chainCursors.chain, set: { failures, backoffUntil } });
    // A node's error carries the request and the RPC URL (which may hold a provider key): only its own words are kept.
    report.error = reasonOf(error);
    report.rateLimited = isRateLimited(error);
    return report;
  }
}

/**
 * Reads the blocks after `from` (at most MAX_REVERT_SCAN_BLOCKS, up to the log
 * cursor) for reverted repay calls and records each borrower's as a failed
 * repayment, then moves the search's cursor. A failure is reported
 * (`revertScanError`) and leaves the cursor, without backing the chain off:
 * failures are news, credits are money, and the search never holds them up.
 */
async function searchReverts(
  deps: ListenerDeps,
  input: {
    reader: EvmChainReader;
    chain: LiveChain;
    owners: Map<string, string[]>;
    config: ReturnType<typeof effectiveChainConfig>;
    report: EvmListenerReport;
    from: number;
  },
) {
  const { reader, chain, owners, config, report } = input;
  // Far behind (a first poll from an early start block, a long outage), the search skips to a lag it can catch up.
  const from = Math.max(input.from, report.lastBlock - MAX_REVERT_SCAN_LAG);
  if (from > input.from) report.revertScanSkipped = from - input.from;
  const to = Math.min(from + MAX_REVERT_SCAN_BLOCKS, report.lastBlock);
  if (to <= from) return;
  const collections = new Set(owners.keys());
  try {
    const borrowersOf = (ids: readonly string[]) => awaitingBorrowers(deps.db, chain, ids);
    for (const tx of await reader.failedRepays({ afterBlock: from, toBlock: to, collections: [...collections], borrowersOf })) {
      const blockHash = tx.family === "EVM" ? (tx.blockHash ?? null) : null;
      for (const obs of classifyTransaction(tx, { config, collections })) await applyOrHoldLive(deps, owners, { obs, blockHash }, report);
    }
    await deps.db.update(chainCursors).set({ revertsScannedTo: to }).where(eq(chainCursors.chain, chain));
  } catch (error) {
    report.revertScanError = reasonOf(error);
  }
}

/** The borrower wallet of each of `ids` that is a loan on `chain` awaiting repayment (ACTIVE or DEFAULTED), in reads of at most 90 ids. */
async function awaitingBorrowers(db: Db, chain: LiveChain, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunk([...ids], IDS_PER_LIST)) {
    const rows = await db
      .select({ id: loans.id, borrower: loans.borrowerWalletAddress })
      .from(loans)
      .where(and(inArray(loans.id, part), eq(loans.chain, chain), inArray(loans.status, ["ACTIVE", "DEFAULTED"])));
    for (const row of rows) out.set(row.id, row.borrower);
  }
  return out;
}

/** Remembers a block's hash; a different hash already remembered for it means a reorg under this very poll: stop, the next poll undoes it. */
async function rememberBlock(db: Db, chain: LiveChainSettings["chain"], blockNumber: number, blockHash: string, credited: boolean, now: Date) {
  await db
    .insert(chainBlocks)
    .values({ chain, blockNumber, blockHash, credited, createdAt: now })
    .onConflictDoUpdate({
      target: [chainBlocks.chain, chainBlocks.blockNumber],
      set: { credited: sql`${chainBlocks.credited} OR excluded.credited` },
      setWhere: sql`${chainBlocks.blockHash} = excluded.block_hash`,
    });
  const [row] = await db
    .select({ blockHash: chainBlocks.blockHash })
    .from(chainBlocks)
    .where(and(eq(chainBlocks.chain, chain), eq(chainBlocks.blockNumber, blockNumber)));
  if (row && row.blockHash !== blockHash) throw new Error(`block ${blockNumber} of ${chain} changed while it was read (a reorg); the next poll undoes it`);
}

/**
 * The cursor moves to the last block read, with its time as the chain's read-through time (both only forward: of two
 * overlapping polls the one further on stands), and its hash replaces the previous cursor's (credited blocks are kept).
 */
async function saveCursor(db: Db, chain: LiveChainSettings["chain"], read: Pick<EvmReadResult, "scannedTo" | "scannedToHash" | "scannedToTime">, now: Date) {
  const block = read.scannedTo;
  const readThroughAt = read.scannedToTime === null ? null : new Date(read.scannedToTime);
  await db.batch([
    db
      .insert(chainCursors)
      .values({ chain, lastBlock: block, updatedAt: now, readThroughAt })
      .onConflictDoUpdate({
        target: chainCursors.chain,
        set: {
          readThroughAt: sql`CASE WHEN excluded.last_block >= ${chainCursors.lastBlock} THEN excluded.read_through_at ELSE ${chainCursors.readThroughAt} END`,
          lastBlock: sql`MAX(${chainCursors.lastBlock}, excluded.last_block)`,
          updatedAt: now,
        },
      }),
    db.delete(chainBlocks).where(and(eq(chainBlocks.chain, chain), eq(chainBlocks.credited, false))),
  ]);
  if (read.scannedToHash) await rememberBlock(db, chain, block, read.scannedToHash, false, now);
}

/**
 * Compares the remembered hashes with the chain's and undoes what orphaned
 * blocks credited; null when nothing changed. The cursor goes back to the
 * highest remembered block whose hash still holds below the first changed
 * one (or a window below it when none is remembered), so blocks of the
 * winning chain in between are read again.
 */
async function undoReorg(deps: ListenerDeps, reader: EvmChainReader, chain: LiveChainSettings["chain"], cursor: number, startBlock: number) {
  const { db } = deps;
  const remembered = await db
    .select({ blockNumber: chainBlocks.blockNumber, blockHash: chainBlocks.blockHash })
    .from(chainBlocks)
    .where(eq(chainBlocks.chain, chain))
    .orderBy(asc(chainBlocks.blockNumber));
  if (remembered.length === 0) return null;
  const current = await reader.blockHashes(remembered.map((r) => r.blockNumber));
  const changed = remembered.filter((r) => current.get(r.blockNumber) !== r.blockHash);
  if (changed.length === 0) return null;
  const firstChanged = changed[0]!.blockNumber;
  const good = remembered.filter((r) => r.blockNumber < firstChanged && current.get(r.blockNumber) === r.blockHash).at(-1);
  const lastGood = Math.min(cursor, good ? good.blockNumber : Math.max(startBlock, firstChanged - 1 - REORG_WINDOW_BLOCKS));

  // Un-credit every live repayment credited above the last good block, each in its loan's writer.
  const credited = await db
    .selectDistinct({
      tenantId: settlements.tenantId,
      loanId: settlements.loanId,
      txHash: settlements.txHash,
      logIndex: settlements.logIndex,
      blockNumber: settlements.blockNumber,
    })
    .from(settlements)
    .where(
      and(
        eq(settlements.chain, chain),
        gt(settlements.blockNumber, lastGood),
        eq(settlements.status, "CONFIRMED"),
        inArray(settlements.kind, ["REPAYMENT", "PARTIAL_REPAYMENT", "SURPLUS"]),
      ),
    );
  for (const row of credited) {
    if (row.txHash === null || row.logIndex === null || row.blockNumber === null) continue;
    await deps.writer.run({
      kind: "repaymentReversed",
      tenantId: row.tenantId,
      loanId: row.loanId,
      payment: { chain, txHash: row.txHash, logIndex: row.logIndex, blockNumber: row.blockNumber },
    });
  }
  // Then forget what the orphaned blocks showed, and move the cursor back: one batch, after every un-credit held.
  const [dropped] = await db.batch([
    db
      .delete(unmatchedPayments)
      .where(and(eq(unmatchedPayments.chain, chain), gt(unmatchedPayments.blockNumber, lastGood)))
      .returning({ id: unmatchedPayments.id }),
    db.delete(chainBlocks).where(and(eq(chainBlocks.chain, chain), gt(chainBlocks.blockNumber, lastGood))),
    // A held payment of an orphaned block never happened: re-mined, it is read (and applied or held) again.
    db.delete(heldPayments).where(and(eq(heldPayments.chain, chain), gt(heldPayments.blockNumber, lastGood))),
    db
      .update(chainCursors)
      .set({
        lastBlock: lastGood,
        // Unknown until the next read: the orphaned blocks' payments are no longer read, so no live loan of the chain is judged meanwhile.
        readThroughAt: null,
        // Reverted repays re-mined in the winning blocks are searched again (a failure already recorded is not recorded twice).
        revertsScannedTo: sql`MIN(coalesce(${chainCursors.revertsScannedTo}, ${chainCursors.lastBlock}), ${lastGood})`,
        updatedAt: deps.clock.now(),
      })
      .where(eq(chainCursors.chain, chain)),
  ]);
  return { fromBlock: lastGood + 1, reversed: credited.length, unmatchedDropped: dropped.length };
}

/**
 * One observation of a live EVM chain. A repayment goes to its loan's writer
 * only when it paid the loan's own tenant's verified COLLECTIONS wallet;
 * money that reached a COLLECTIONS wallet otherwise (no pool event, an
 * unknown loan, another lender's loan) is kept as unmatched for the wallet's
 * tenant, without naming another tenant's loan.
 */
async function handleLive(deps: ListenerDeps, owners: Map<string, string[]>, obs: Observation, report: ListenerReport) {
  const now = deps.clock.now();
  const holders = owners.get(obs.to.toLowerCase()) ?? [];
  const keptFor = holders.length === 1 ? holders[0]! : null;
  const keep = async (reason: string, payment: Observation = obs, settles = true) => {
    if (payment.kind !== "payment") return;
    report.unmatched++;
    await recordUnmatched(deps, { payment: { ...payment, to: getAddress(payment.to) }, reason, tenantId: keptFor, now, settles });
  };
  // Anyone can send a reverted repay claiming any amount (its calldata): one no database stores is no attempt to repay.
  // Kept as received, never attributable: its 0 would be credited and the record spent.
  if (obs.amount > MAX_STORABLE_UNITS) {
    return keep(`a transfer of ${obs.amount} units, more than can be stored`, { ...obs, loanId: null, amount: 0n }, false);
  }
  if (!obs.loanId) return keep("a transfer to a COLLECTIONS wallet without the pool's Repaid event (no loan reference)");
  const [loan] = await deps.db
    .select({ tenantId: loans.tenantId, chain: loans.chain, borrower: loans.borrowerWalletAddress })
    .from(loans)
    .where(eq(loans.id, obs.loanId))
    .limit(1);
  if (!loan) return keep("no loan with this id");
  if (!holders.includes(loan.tenantId)) return keep("the Repaid names a loan of another lender than this COLLECTIONS wallet's", { ...obs, loanId: null });
  if (loan.chain !== obs.chain) return keep(`the loan is on ${loan.chain}, not ${obs.chain}`);
  // Anyone can send a reverted repay naming any loan for the price of gas: only the borrower's own is its failed repayment.
  if (obs.kind === "failed" && !isAddressEqual(getAddress(obs.from), getAddress(loan.borrower))) return;
  await deps.writer.run(
    obs.kind === "payment"
      ? { kind: "repayment", tenantId: loan.tenantId, loanId: obs.loanId, payment: obs }
      : { kind: "repaymentFailed", tenantId: loan.tenantId, loanId: obs.loanId, payment: obs },
  );
  if (obs.kind === "payment") report.payments++;
  else report.failures++;
}

/** A viem client on a live chain's RPC URL (viem retries a failed request once; the poll's back-off does the rest). */
const rpcClient = (settings: LiveChainSettings): EvmReadClient => createPublicClient({ transport: http(settings.rpcUrl, { retryCount: 1 }) });

/**
 * What the cron settlement-listener job runs for live chains: one poll of
 * each configured live EVM chain (POLYGON, BASE), each on its own (one
 * chain's failure is reported, not thrown). `startBlocks`: where a chain
 * without a cursor starts (its pool's deployment block).
 *
 * @example for (const r of await pollLiveEvmChains(deps, liveChainSettings(env))) if (r.transactions || r.error) log.info("settlement listener", r)
 */
export async function pollLiveEvmChains(
  deps: ListenerDeps,
  live: LiveChains,
  options: { clientFor?: (settings: LiveChainSettings) => EvmReadClient; startBlocks?: Partial<Record<LiveChain, number>> } = {},
): Promise<EvmListenerReport[]> {
  const reports: EvmListenerReport[] = [];
  for (const settings of Object.values(live)) {
    if (settings.chain === "TON" || !settings.poolAddress) continue;
    const reader = evmChainReader(settings, (options.clientFor ?? rpcClient)(settings));
    reports.push(await pollEvmChain(deps, { settings, reader, startBlock: options.startBlocks?.[settings.chain] ?? settings.startBlock }));
  }
  return reports;
}
