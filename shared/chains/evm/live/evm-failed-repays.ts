/**
 * Reverted repayments on a live EVM chain (POLYGON, BASE). A reverted
 * transaction has no logs, so the listener's `eth_getLogs` never sees a
 * borrower's `repay` that failed (no allowance, too little balance). This
 * reads the blocks themselves, whole (`eth_getBlockByNumber` with its
 * transactions), keeps the calls of the pool's `repay` that name one of the
 * chain's verified COLLECTIONS wallets, and asks each one's receipt: those
 * that reverted come back as transactions for the classifier, which makes a
 * failed repayment of them (shared/settlement/classify-transaction.ts).
 *
 * The cost grows with the blocks read, not with the loans: one block read
 * each, plus a receipt for each repay call found. The listener reads at most
 * MAX_REVERT_SCAN_BLOCKS a poll, behind its log cursor, with its own cursor.
 */
import { type Address, decodeFunctionData, getAddress, isAddressEqual, toFunctionSelector } from "viem";
import type { ChainTransaction } from "../../chain-port.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import { bytes32ToLoanId } from "../../loan-id.ts";
import { SVC_POOL_ABI } from "../svc-pool-abi.ts";
import type { EvmReadClient } from "./evm-log-reader.ts";

/**
 * Blocks read whole per poll at most: 200 is over six minutes of Polygon's or
 * Base's 2-second blocks, read each minute, so the search catches up after an
 * outage. Each block read is a subrequest: two chains' 400, with their receipts
 * and logs, stay within an invocation's 1,000 (workers/cron/budget.ts).
 */
export const MAX_REVERT_SCAN_BLOCKS = 200;
/**
 * How far behind the log cursor the search may be: 10,000 blocks, five and a
 * half hours of 2-second blocks, which it catches up in about an hour. Further
 * behind (a first poll from an early start block, a longer outage) it skips
 * ahead to this lag: failures older than that are not news any more (the
 * borrower's wallet showed each revert; loans are not moved by them).
 */
export const MAX_REVERT_SCAN_LAG = 10_000;
/** Blocks requested at once. */
const CONCURRENCY = 8;
/**
 * Receipts asked per loan in one search at most: a loan's first failure in it
 * is news, a borrower's thousand more in the same minutes are not, and each
 * receipt is a subrequest of the invocation's budget.
 */
export const MAX_RECEIPTS_PER_LOAN = 3;

const REPAY = SVC_POOL_ABI.find((item) => item.type === "function" && item.name === "repay")!;
const REPAY_SELECTOR = toFunctionSelector(REPAY);

export type FailedRepaysInput = {
  /** Read from the block after this one… */
  afterBlock: number;
  /** …up to this one (the log cursor: only blocks already `confirmations` deep). */
  toBlock: number;
  /** Every verified COLLECTIONS address of the chain. */
  collections: readonly string[];
  /**
   * The borrower wallet of each of these loans that awaits repayment on this
   * chain (the listener reads them): only a call its loan's borrower sent can
   * be that loan's failed repayment, so only those calls' receipts are asked.
   * Absent: every call's.
   */
  borrowersOf?: (loanIds: readonly string[]) => Promise<ReadonlyMap<string, string>>;
};

/**
 * The reverted calls of the pool's `repay` to a COLLECTIONS address in the
 * blocks after `afterBlock` up to `toBlock`, oldest first, each with its
 * calldata (the classifier decodes the loan from it) and its block's hash and
 * time. Throws on an RPC error (the listener backs off and keeps its cursor).
 *
 * @example await readFailedRepays(settings, client, { afterBlock: 120, toBlock: 180, collections: ["0x90F7…"] })
 */
export async function readFailedRepays(settings: LiveChainSettings, client: EvmReadClient, input: FailedRepaysInput): Promise<ChainTransaction[]> {
  if (!settings.poolAddress || input.collections.length === 0 || input.toBlock <= input.afterBlock) return [];
  const pool = getAddress(settings.poolAddress);
  const collections = input.collections.map((a) => getAddress(a));
  const numbers = Array.from({ length: input.toBlock - input.afterBlock }, (_, i) => BigInt(input.afterBlock + 1 + i));
  const found: ChainTransaction[] = [];
  const asked = new Map<string, number>();
  for (let i = 0; i < numbers.length; i += CONCURRENCY) {
    const blocks = await Promise.all(numbers.slice(i, i + CONCURRENCY).map((blockNumber) => client.getBlock({ blockNumber, includeTransactions: true })));
    const named = blocks.flatMap((block) =>
      block.transactions.flatMap((tx) => {
        const loanId = tx.to && isAddressEqual(tx.to, pool) ? repayingLoan(tx.input, collections) : null;
        return loanId ? [{ block, tx, loanId }] : [];
      }),
    );
    if (named.length === 0) continue;
    // Anyone can send calls that revert naming any loan: only its borrower's are asked about, a few per loan.
    const borrowers = input.borrowersOf ? await input.borrowersOf([...new Set(named.map((c) => c.loanId))]) : null;
    for (const block of blocks) {
      const calls = named
        .filter((c) => c.block === block)
        .filter((c) => {
          if (borrowers) {
            const borrower = borrowers.get(c.loanId);
            if (!borrower || !isAddressEqual(borrower as Address, c.tx.from)) return false;
          }
          const n = asked.get(c.loanId) ?? 0;
          if (n >= MAX_RECEIPTS_PER_LOAN) return false;
          asked.set(c.loanId, n + 1);
          return true;
        })
        .map((c) => c.tx);
      const receipts = await Promise.all(calls.map((tx) => client.getTransactionReceipt({ hash: tx.hash })));
      calls.forEach((tx, k) => {
        if (receipts[k]!.status !== "reverted") return;
        found.push({
          family: "EVM",
          chain: settings.chain,
          hash: tx.hash,
          blockNumber: Number(block.number),
          blockHash: block.hash!,
          timestamp: Number(block.timestamp),
          from: getAddress(tx.from),
          to: pool,
          input: tx.input,
          status: "reverted",
          logs: [],
        });
      });
    }
  }
  return found;
}

/** The loan a call of `repay(loanId, collections, amount)` naming one of `collections` repays; null for any other call. */
function repayingLoan(data: `0x${string}`, collections: readonly Address[]): string | null {
  if (!data.startsWith(REPAY_SELECTOR)) return null;
  try {
    const call = decodeFunctionData({ abi: [REPAY], data });
    if (!collections.some((c) => isAddressEqual(c, call.args[1]))) return null;
    return bytes32ToLoanId(call.args[0]);
  } catch {
    return null;
  }
}
