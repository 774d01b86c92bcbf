import { type Address, type Hash, type PublicClient, TransactionNotFoundError, TransactionReceiptNotFoundError, type TransactionReceipt } from "viem";
import type { LiveChainSettings } from "../../live/live-config.ts";
import type { EvmSendRecord } from "./evm-send-record.ts";

/** Where a reference's transaction stands on the chain. */
export type TransferStatus =
  | { kind: "confirmed"; hash: string; blockNumber: number; confirmedAt: Date }
  | { kind: "mined"; hash: string; detail: string }
  | { kind: "reverted"; hash: string; reason: string }
  | { kind: "nonce-used"; reason: string }
  /**
   * Not mined; `known`: the node still holds the newest transaction in its pool; `nextInLine`: every lower nonce of
   * the sender is mined or waiting in the pool (no gap), so only fees can hold it back (behind a gap they would not);
   * `pendingCount`: the node's pending count, the lowest nonce missing when it is below ours.
   */
  | { kind: "unmined"; known: boolean; nextInLine: boolean; pendingCount: number };

const receiptOf = (client: PublicClient, hash: string): Promise<TransactionReceipt | null> =>
  client.getTransactionReceipt({ hash: hash as Hash }).catch((error) => {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  });

/**
 * The chain's word on a reference's transactions (all of one nonce, so at
 * most one is mined). A receipt counts once it is `confirmations` blocks
 * deep, or sooner when the node's `finalized` block has reached it (the
 * chain's own promise that the block stays; Anvil's finalized lags the head
 * by 64 blocks, Base's by minutes, so on most nodes depth comes first). The
 * nonce count is read before the receipts: if the sender's mined count had
 * passed our nonce `confirmations` blocks deep and none of our hashes has a
 * receipt, another transaction took the nonce and ours can never be mined.
 * Both verdicts that end an attempt (another transaction took the nonce; ours
 * reverted) are judged at the depth a success needs: at the head, a node
 * behind a load balancer may count a block whose receipt another backend
 * does not serve yet, and a shallow block may still be replaced by a reorg.
 * Throws when the node cannot be asked.
 */
export async function transferStatus(client: PublicClient, settings: LiveChainSettings, from: Address, record: EvmSendRecord): Promise<TransferStatus> {
  const head = await client.getBlockNumber();
  let finalized: bigint | null | undefined;
  const finalizedBlock = async () => {
    // A node without the tag: depth alone decides.
    finalized ??= await client
      .getBlock({ blockTag: "finalized" })
      .then((b) => b.number)
      .catch(() => null);
    return finalized;
  };
  for (const tx of [...record.txs].reverse()) {
    const receipt = await receiptOf(client, tx.hash);
    if (!receipt) continue;
    const depth = head > receipt.blockNumber ? head - receipt.blockNumber : 0n;
    const final = depth >= BigInt(settings.confirmations) || ((await finalizedBlock()) ?? -1n) >= receipt.blockNumber;
    if (!final) {
      return {
        kind: "mined",
        hash: receipt.transactionHash,
        detail: `mined in block ${receipt.blockNumber}${receipt.status === "reverted" ? " (reverted)" : ""}, ${depth} of ${settings.confirmations} confirmations`,
      };
    }
    if (receipt.status === "reverted") {
      return {
        kind: "reverted",
        hash: receipt.transactionHash,
        reason: `the transfer ${receipt.transactionHash} reverted in block ${receipt.blockNumber}: nothing moved`,
      };
    }
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    return {
      kind: "confirmed",
      hash: receipt.transactionHash,
      blockNumber: Number(receipt.blockNumber),
      confirmedAt: new Date(Number(block.timestamp) * 1000),
    };
  }
  // Read after the receipts, `confirmations` below the head read first: a transaction of ours mined since sits above it.
  if ((await settledNonceCount(client, settings, from, head, finalizedBlock)) > record.nonce) {
    return { kind: "nonce-used", reason: `nonce ${record.nonce} of ${from} on ${settings.chain} was used by another transaction: nothing moved` };
  }
  const newest = record.txs.at(-1)!;
  const [known, pendingCount] = await Promise.all([
    client
      .getTransaction({ hash: newest.hash as Hash })
      .then(() => true)
      .catch((error) => {
        if (error instanceof TransactionNotFoundError) return false;
        throw error;
      }),
    client.getTransactionCount({ address: from, blockTag: "pending" }),
  ]);
  // The pool's count runs on past our nonce only when every lower nonce is mined or waiting in the pool too (no gap).
  return { kind: "unmined", known, nextInLine: pendingCount > record.nonce, pendingCount };
}

/**
 * The sender's transaction count `confirmations` blocks below `head`, or at
 * the finalized block when the node cannot serve that block's state (a
 * pruned node keeps only recent states); 0 (no verdict) when it can serve
 * neither. Never throws for want of past state: a success must not wait on it.
 */
async function settledNonceCount(
  client: PublicClient,
  settings: LiveChainSettings,
  from: Address,
  head: bigint,
  finalizedBlock: () => Promise<bigint | null>,
): Promise<number> {
  const deep = head - BigInt(settings.confirmations);
  if (deep < 0n) return 0;
  try {
    return await client.getTransactionCount({ address: from, blockNumber: deep });
  } catch {
    const finalized = await finalizedBlock();
    if (finalized === null) return 0;
    return client.getTransactionCount({ address: from, blockNumber: finalized }).catch(() => 0);
  }
}
