import type { Address, Message, Transaction } from "@ton/core";
import { JETTON_OP, jettonHeader } from "../jetton-messages.ts";
import type { TonNetwork } from "../ton-network.ts";

/** What became of one signed funding message, followed from the wallet through both jetton wallets. */
export type TraceOutcome =
  /** No transaction of the wallet took the message (yet, or ever once it expired): its history since the send was read in full. */
  | { state: "not-found" }
  /**
   * The wallet's history since the send could not be read in full (more than
   * the pages a trace reads, or an RPC page shorter than asked): the message
   * may have been taken. Never a reason to sign again.
   */
  | { state: "unknown" }
  /** The wallet sent it; a jetton wallet has not processed it yet. */
  | { state: "in-flight"; txHash: string }
  /** The recipient's jetton wallet credited the jettons: final. */
  | { state: "delivered"; txHash: string; lt: bigint; at: number }
  /** Refused on the way (bounced): no jetton moved. */
  | { state: "failed"; txHash: string; reason: string };

/** How far back (pages of 20) a trace looks for a transaction, and how long before the send it stops. */
const PAGES = 10;
const PAGE = 20;
const SLACK_SECONDS = 120;

export const txHashHex = (tx: Transaction) => tx.hash().toString("hex");

/** Whether a transaction ran to its end: computed, not aborted, its actions sent. */
function succeeded(tx: Transaction): { ok: true } | { ok: false; exitCode: number | null } {
  const d = tx.description;
  if (d.type !== "generic") return { ok: false, exitCode: null };
  const compute = d.computePhase;
  if (compute.type !== "vm") return { ok: false, exitCode: null };
  if (!compute.success || d.aborted) return { ok: false, exitCode: compute.exitCode };
  if (d.actionPhase && !d.actionPhase.success) return { ok: false, exitCode: d.actionPhase.resultCode };
  return { ok: true };
}

/**
 * The newest transaction of `address` matching `match`, looking back to
 * `since` (unix seconds): the transaction, "none" when the history back to
 * `since` (or to the account's first transaction) was read and nothing
 * matched, or "unknown" when it could not be read in full: more than PAGES
 * pages (anyone can send an account transactions), or a page shorter than
 * asked that does not end at the account's first transaction (toncenter can
 * answer short pages).
 */
async function findTransaction(
  network: TonNetwork,
  address: Address,
  since: number,
  match: (tx: Transaction) => boolean,
): Promise<Transaction | "none" | "unknown"> {
  let cursor: { lt: bigint; hash: Buffer } | undefined;
  for (let page = 0; page < PAGES; page++) {
    const txs = await network.transactions(address, { limit: PAGE, ...cursor });
    // From the second page on, the first transaction is the cursor itself (inclusive).
    const fresh = cursor ? txs.slice(1) : txs;
    for (const tx of fresh) {
      if (match(tx)) return tx;
      if (tx.now < since - SLACK_SECONDS) return "none";
    }
    const last = txs[txs.length - 1];
    if (!last) return cursor ? "unknown" : "none";
    if (last.prevTransactionLt === 0n) return "none";
    if (txs.length < PAGE) return "unknown";
    cursor = { lt: last.lt, hash: last.hash() };
  }
  return "unknown";
}

/** The transaction of `destination` that received `message` (sent by `source`). */
function receiverOf(network: TonNetwork, message: Message, since: number): Promise<Transaction | "none" | "unknown"> {
  if (message.info.type !== "internal") return Promise.resolve("none");
  const { src, dest, createdLt } = message.info;
  return findTransaction(
    network,
    dest,
    since,
    (tx) => tx.inMessage?.info.type === "internal" && tx.inMessage.info.createdLt === createdLt && tx.inMessage.info.src.equals(src),
  );
}

const internalTo = (tx: Transaction, to: Address | null, op: number) =>
  tx.outMessages.values().find((m) => m.info.type === "internal" && (!to || m.info.dest.equals(to)) && jettonHeader(m.body)?.op === op) ?? null;

/**
 * Follows a signed jetton transfer: the wallet's transaction for the external
 * message whose body hashes to `messageHash`, then the sender's jetton wallet
 * executing `transfer`, then the recipient's jetton wallet executing
 * `internal_transfer`. A jetton wallet that throws bounces the message (the
 * jettons stay or return): that is a failure, nothing moved.
 */
export async function traceJettonTransfer(
  network: TonNetwork,
  input: { wallet: Address; jettonWallet: Address; messageHash: string; sentAt: number },
): Promise<TraceOutcome> {
  const walletTx = await findTransaction(
    network,
    input.wallet,
    input.sentAt,
    (tx) => tx.inMessage?.info.type === "external-in" && tx.inMessage.body.hash().toString("hex") === input.messageHash,
  );
  if (walletTx === "none") return { state: "not-found" };
  if (walletTx === "unknown") return { state: "unknown" };
  const txHash = txHashHex(walletTx);
  const toJettonWallet = internalTo(walletTx, input.jettonWallet, JETTON_OP.transfer);
  if (!toJettonWallet) {
    return { state: "failed", txHash, reason: "the wallet took the message but sent nothing (not enough TON for the attached amount and fees?)" };
  }
  const senderTx = await receiverOf(network, toJettonWallet, input.sentAt);
  if (typeof senderTx === "string") return { state: "in-flight", txHash };
  const sender = succeeded(senderTx);
  if (!sender.ok) {
    return { state: "failed", txHash, reason: `the sender's jetton wallet refused the transfer (exit code ${sender.exitCode}) and bounced it: nothing moved` };
  }
  const toRecipient = internalTo(senderTx, null, JETTON_OP.internalTransfer);
  if (!toRecipient) return { state: "failed", txHash, reason: "the sender's jetton wallet sent no internal_transfer: nothing moved" };
  const recipientTx = await receiverOf(network, toRecipient, input.sentAt);
  if (typeof recipientTx === "string") return { state: "in-flight", txHash };
  const recipient = succeeded(recipientTx);
  if (!recipient.ok) {
    return {
      state: "failed",
      txHash,
      reason: `the recipient's jetton wallet refused the transfer (exit code ${recipient.exitCode}); it bounced back: nothing moved`,
    };
  }
  return { state: "delivered", txHash, lt: recipientTx.lt, at: recipientTx.now };
}
