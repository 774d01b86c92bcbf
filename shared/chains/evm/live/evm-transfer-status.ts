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
   * the sender is mined, so only its fees can hold it back (behind a gap, higher fees would not help).
   */
  | { kind: "unmined"; known: boolean; nextInLine: boolean };

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
  const deep = head - BigInt(settings.confirmations);
  const [deepCount, latestCount] = await Promise.all([
    deep < 0n ? Promise.resolve(0) : client.getTransactionCount({ address: from, blockNumber: deep }),
    client.getTransactionCount({ address: from, blockTag: "latest" }),
  ]);
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
  if (deepCount > record.nonce) {
    return { kind: "nonce-used", reason: `nonce ${record.nonce} of ${from} on ${settings.chain} was used by another transaction: nothing moved` };
  }
  const newest = record.txs.at(-1)!;
  const known = await client
    .getTransaction({ hash: newest.hash as Hash })
    .then(() => true)
    .catch((error) => {
      if (error instanceof TransactionNotFoundError) return false;
      throw error;
    });
  return { kind: "unmined", known, nextInLine: latestCount === record.nonce };
}
