/**
 * The live EVM `readTransactions` (POLYGON, BASE): the settlement listener's
 * view of a real chain through viem's JSON-RPC client. It reads only what can
 * credit a repayment or be kept as money received: the pool's `Repaid` events
 * and the token's `Transfer` events to the tenants' COLLECTIONS addresses,
 * with `eth_getLogs` over bounded block ranges from a cursor, and only blocks
 * at least `confirmations` deep. Each transaction that has such a log comes
 * back whole from its receipt (status and every log, so the classifier can
 * check that a Repaid is backed by the token's own Transfer), with its block's
 * hash for reorg detection (shared/settlement/evm-listener.ts).
 */
import { type Address, BaseError, getAddress, HttpRequestError, type Log, type PublicClient, parseAbiItem, RpcError } from "viem";
import type { ChainTransaction } from "../../chain-port.ts";
import type { LiveChainSettings } from "../../live/live-config.ts";
import { SVC_POOL_ABI } from "../svc-pool-abi.ts";

/** Blocks per `eth_getLogs` call at most (public RPCs cap ranges around 2,000–10,000). */
export const MAX_LOG_RANGE = 2_000;

const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const REPAID = SVC_POOL_ABI.find((item) => item.type === "event" && item.name === "Repaid")!;

/** The JSON-RPC reads the reader makes: a viem PublicClient has them all (tests may pass a narrower double). */
export type EvmReadClient = Pick<PublicClient, "getBlockNumber" | "getLogs" | "getTransactionReceipt" | "getBlock">;

export type EvmReadInput = {
  /** The listener's cursor: the last block already read (read from the next one). */
  afterBlock: number;
  /** Stop after the range in which this many transactions have been found (a range is never split). */
  limit: number;
  /** Every verified COLLECTIONS address of the chain: whose incoming Transfers and Repaid events count. */
  collections: readonly string[];
  /** Blocks per `eth_getLogs` call (≤ MAX_LOG_RANGE); a provider's "too many results" halves it. */
  maxRange?: number;
  /** Blocks read at most in this call (a poll far behind catches up over several); unbounded when absent. */
  maxBlocks?: number;
};

export type EvmReadResult = {
  /** Oldest first (block, then position in the block). */
  transactions: ChainTransaction[];
  /** The chain's head block as read. */
  head: number;
  /** The last block read: the listener's next cursor (`afterBlock` when nothing was deep enough yet). */
  scannedTo: number;
  /** That block's hash (null when nothing was read): the listener checks it on its next poll. */
  scannedToHash: string | null;
  /**
   * That block's time, unix ms (null when nothing was read): every payment made before it has been read, since a
   * block's timestamp is above its parent's. How far a live loan of the chain can be judged (shared/sweeps/sweep-loans.ts).
   */
  scannedToTime: number | null;
};

/**
 * The transactions of `settings.chain` after `afterBlock` up to
 * `head − confirmations` that carry a pool `Repaid` to a COLLECTIONS address
 * or a token Transfer to one, in ranges of at most `maxRange` blocks. Throws
 * on an RPC error or a rate limit (the listener backs off and keeps its cursor).
 *
 * @example await readEvmTransactions(settings, client, { afterBlock: 120, limit: 100, collections: ["0x90F7…"] })
 */
export async function readEvmTransactions(settings: LiveChainSettings, client: EvmReadClient, input: EvmReadInput): Promise<EvmReadResult> {
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
  const safeHead = Math.min(head - settings.confirmations, input.afterBlock + (input.maxBlocks ?? Number.POSITIVE_INFINITY));
  const none: EvmReadResult = { transactions: [], head, scannedTo: input.afterBlock, scannedToHash: null, scannedToTime: null };
  if (safeHead <= input.afterBlock) return none;
  const pool = settings.poolAddress ? getAddress(settings.poolAddress) : null;
  const token = getAddress(settings.tokenAddress);
  const collections = [...new Set(input.collections.map((a) => getAddress(a)))];
  // Nobody can be credited or paid without a COLLECTIONS wallet: nothing to read, and the cursor may move on.
  let range = Math.max(1, Math.min(input.maxRange ?? MAX_LOG_RANGE, MAX_LOG_RANGE));
  const found = new Map<string, { blockNumber: bigint; transactionIndex: number }>();
  let scannedTo = input.afterBlock;
  while (scannedTo < safeHead && found.size < input.limit) {
    const fromBlock = BigInt(scannedTo + 1);
    const toBlock = BigInt(Math.min(scannedTo + range, safeHead));
    let logs: Log[];
    try {
      logs = collections.length === 0 ? [] : await logsIn(client, { pool, token, collections, fromBlock, toBlock });
    } catch (error) {
      // "Query returned more than N results" (-32005 without an HTTP 429): fewer blocks per call, then try again.
      if (range > 1 && tooManyResults(error)) {
        range = Math.max(1, Math.floor(range / 2));
        continue;
      }
      throw error;
    }
    for (const log of logs) {
      if (log.transactionHash && log.blockNumber !== null && !found.has(log.transactionHash)) {
        found.set(log.transactionHash, { blockNumber: log.blockNumber, transactionIndex: log.transactionIndex ?? 0 });
      }
    }
    scannedTo = Number(toBlock);
  }
  if (scannedTo === input.afterBlock) return none;
  const ordered = [...found.entries()].sort(([, a], [, b]) =>
    a.blockNumber === b.blockNumber ? a.transactionIndex - b.transactionIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
  const times = new Map<bigint, Promise<bigint>>();
  const timeOf = (blockNumber: bigint) => {
    if (!times.has(blockNumber))
      times.set(
        blockNumber,
        client.getBlock({ blockNumber }).then((b) => b.timestamp),
      );
    return times.get(blockNumber)!;
  };
  const transactions: ChainTransaction[] = [];
  for (const [hash] of ordered) {
    const receipt = await client.getTransactionReceipt({ hash: hash as `0x${string}` });
    transactions.push({
      family: "EVM",
      chain: settings.chain,
      hash: receipt.transactionHash,
      blockNumber: Number(receipt.blockNumber),
      blockHash: receipt.blockHash,
      timestamp: Number(await timeOf(receipt.blockNumber)),
      from: getAddress(receipt.from),
      to: receipt.to ? getAddress(receipt.to) : null,
      // Only the receipt is read: a reverted transaction has no logs, so getLogs never finds one (evm-failed-repays.ts reads blocks for those).
      input: "0x",
      status: receipt.status,
      logs: receipt.logs.map((l) => ({ address: getAddress(l.address), topics: [...l.topics], data: l.data, logIndex: l.logIndex })),
    });
  }
  const scannedBlock = await client.getBlock({ blockNumber: BigInt(scannedTo) });
  return { transactions, head, scannedTo, scannedToHash: scannedBlock.hash, scannedToTime: Number(scannedBlock.timestamp) * 1000 };
}

async function logsIn(
  client: EvmReadClient,
  q: { pool: Address | null; token: Address; collections: Address[]; fromBlock: bigint; toBlock: bigint },
): Promise<Log[]> {
  const { fromBlock, toBlock } = q;
  const [repaid, transfers] = await Promise.all([
    q.pool ? client.getLogs({ address: q.pool, event: REPAID, args: { collections: q.collections }, fromBlock, toBlock, strict: false }) : [],
    client.getLogs({ address: q.token, event: TRANSFER, args: { to: q.collections }, fromBlock, toBlock, strict: false }),
  ]);
  return [...(repaid as Log[]), ...(transfers as Log[])];
}

/**
 * The current hashes of `numbers` on the chain (null for a block the chain
 * no longer has, after a reorg to a shorter chain): what the listener
 * compares with the hashes it remembered.
 */
export async function readEvmBlockHashes(client: Pick<EvmReadClient, "getBlock">, numbers: readonly number[]): Promise<Map<number, string | null>> {
  const out = new Map<number, string | null>();
  for (const n of numbers) {
    try {
      out.set(n, (await client.getBlock({ blockNumber: BigInt(n) })).hash);
    } catch (error) {
      if (error instanceof BaseError && error.name === "BlockNotFoundError") out.set(n, null);
      else throw error;
    }
  }
  return out;
}

/** An RPC rate limit: HTTP 429, or JSON-RPC -32005 "limit exceeded" (the listener backs off and keeps its cursor). */
export function isRateLimited(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return !!error.walk((e) => (e instanceof HttpRequestError && e.status === 429) || (e instanceof RpcError && e.code === -32005 && !mentionsResults(e)));
}

function tooManyResults(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return !!error.walk((e) => e instanceof RpcError && (e.code === -32005 || e.code === -32602) && mentionsResults(e));
}

const mentionsResults = (e: BaseError) => /more than|too many|range|results/i.test(`${e.details} ${e.shortMessage}`);
