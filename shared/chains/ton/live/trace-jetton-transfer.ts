import type { Address, Message, Transaction } from "@ton/core";
import { JETTON_OP, jettonHeader } from "../jetton-messages.ts";
import type { TonNetwork } from "../ton-network.ts";

/** A transaction of a known account: its logical time and hash, enough to read it again. */
export type TxPosition = { lt: bigint; hash: Buffer };

/**
 * How far the traces of one message got, stored with it (ton_transfers.trace), so the next trace goes on from
 * there: anyone can bury a transaction under more than one trace reads, so a search walks back over several traces.
 * `wallet` and `sender`: the transactions found so far (the wallet's that took the message; the sender's jetton
 * wallet's that executed the transfer). `resumeAt`: the oldest transaction read by the search for the next one, in
 * the account that search reads (the wallet, the sender's jetton wallet, or the recipient's, after the last found),
 * and `walkFrom`: when that search read the account's newest transaction (unix seconds, chain time).
 */
export type TraceProgress = { wallet?: TxPosition; sender?: TxPosition; resumeAt?: TxPosition; walkFrom?: number };

/** What became of one signed funding message, followed from the wallet through both jetton wallets. */
export type TraceOutcome =
  /**
   * No transaction of the wallet took the message up to `readTo` (unix seconds, chain time: when the search read
   * the wallet's newest transaction): its history from the send to then was read in full.
   */
  | { state: "not-found"; readTo: number }
  /**
   * The wallet's history since the send is not read in full yet (more than the pages a trace reads, or an RPC page
   * shorter than asked): the message may have been taken. Never a reason to sign again; the next trace goes on from
   * `progress`.
   */
  | { state: "unknown"; progress: TraceProgress }
  /** The wallet sent it; a jetton wallet has not processed it yet, or its transaction is not read yet (`progress`). */
  | { state: "in-flight"; txHash: string; progress: TraceProgress }
  /** The recipient's jetton wallet credited the jettons: final. */
  | { state: "delivered"; txHash: string; lt: bigint; at: number }
  /** Refused on the way (bounced): no jetton moved. */
  | { state: "failed"; txHash: string; reason: string };

/** How far back (pages of 20) one trace reads an account, and how long before the send a search stops. */
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

/** A search's result: the transaction, "none" (read back to the send, or to the account's first transaction), or where to go on. */
type Search = { tx: Transaction } | "none" | { resumeAt: TxPosition | undefined };

const positionOf = (tx: Transaction): TxPosition => ({ lt: tx.lt, hash: tx.hash() });

/**
 * The newest transaction of `address` matching `match`, looking back to
 * `since` (unix seconds) from the newest one, or on from `resumeAt` (a
 * transaction read before, itself included): the transaction, "none" when the
 * history back to `since` (or to the account's first transaction) was read and
 * nothing matched, or where the next search goes on when it could not be read
 * that far: more than PAGES pages (anyone can send an account transactions),
 * or a page shorter than asked that does not end at the account's first
 * transaction (toncenter can answer short pages).
 */
async function findTransaction(
  network: TonNetwork,
  address: Address,
  since: number,
  match: (tx: Transaction) => boolean,
  resumeAt?: TxPosition,
): Promise<Search> {
  let cursor = resumeAt;
  for (let page = 0; page < PAGES; page++) {
    const txs = await network.transactions(address, { limit: PAGE, ...cursor });
    // With a cursor, the first transaction is the cursor itself (inclusive), already read.
    const fresh = cursor ? txs.slice(1) : txs;
    for (const tx of fresh) {
      if (match(tx)) return { tx };
      if (tx.now < since - SLACK_SECONDS) return "none";
    }
    const last = txs[txs.length - 1];
    if (!last) return cursor ? { resumeAt: cursor } : "none";
    if (last.prevTransactionLt === 0n) return "none";
    cursor = positionOf(last);
    if (txs.length < PAGE) return { resumeAt: cursor };
  }
  return { resumeAt: cursor };
}

/** A transaction found by an earlier trace, read again (null if the RPC does not return it). */
async function transactionAt(network: TonNetwork, address: Address, at: TxPosition): Promise<Transaction | null> {
  const [tx] = await network.transactions(address, { limit: 1, ...at });
  return tx && tx.lt === at.lt && tx.hash().equals(at.hash) ? tx : null;
}

/** Whether `tx` received `message` (an internal message: its sender and creation time name it). */
const receives = (message: Message) => (tx: Transaction) =>
  message.info.type === "internal" &&
  tx.inMessage?.info.type === "internal" &&
  tx.inMessage.info.createdLt === message.info.createdLt &&
  tx.inMessage.info.src.equals(message.info.src);

const internalTo = (tx: Transaction, to: Address | null, op: number) =>
  tx.outMessages.values().find((m) => m.info.type === "internal" && (!to || m.info.dest.equals(to)) && jettonHeader(m.body)?.op === op) ?? null;

/**
 * Follows a signed jetton transfer: the wallet's transaction for the external
 * message whose body hashes to `messageHash`, then the sender's jetton wallet
 * executing `transfer`, then the recipient's jetton wallet executing
 * `internal_transfer`. A jetton wallet that throws bounces the message (the
 * jettons stay or return): that is a failure, nothing moved. Goes on from
 * `progress` (what earlier traces of the message found and read); `now` is
 * the chain's time (unix seconds).
 */
export async function traceJettonTransfer(
  network: TonNetwork,
  input: { wallet: Address; jettonWallet: Address; messageHash: string; sentAt: number; now: number; progress?: TraceProgress | null },
): Promise<TraceOutcome> {
  const progress = input.progress ?? {};
  // The step the last trace stopped in (after the last transaction it found): its search goes on from resumeAt.
  const stopped = progress.sender ? 3 : progress.wallet ? 2 : 1;
  // A resumed walk began when its first trace read the newest transaction; one whose start is unknown proves nothing (0).
  const walkFrom = progress.resumeAt ? (progress.walkFrom ?? 0) : input.now;
  /** Step `step`'s transaction: read again when an earlier trace found it, else searched (on from where the last trace stopped). */
  const locate = async (step: 1 | 2 | 3, address: Address, match: (tx: Transaction) => boolean, known?: TxPosition): Promise<Search> => {
    if (known) {
      const tx = await transactionAt(network, address, known);
      return tx ? { tx } : { resumeAt: undefined };
    }
    return findTransaction(network, address, input.sentAt, match, step === stopped ? progress.resumeAt : undefined);
  };
  /** Where the next trace goes on after a search in `step` that could not finish (`known`: what was found before it). */
  const goOn = (step: 1 | 2 | 3, known: TraceProgress, search: { resumeAt: TxPosition | undefined }): TraceProgress =>
    search.resumeAt ? { ...known, resumeAt: search.resumeAt, walkFrom: step === stopped ? walkFrom : input.now } : { ...progress };

  const byExternal = (tx: Transaction) => tx.inMessage?.info.type === "external-in" && tx.inMessage.body.hash().toString("hex") === input.messageHash;
  const walletSearch = await locate(1, input.wallet, byExternal, progress.wallet);
  if (walletSearch === "none") return { state: "not-found", readTo: walkFrom };
  if (!("tx" in walletSearch)) {
    if (progress.wallet) return { state: "in-flight", txHash: progress.wallet.hash.toString("hex"), progress };
    return { state: "unknown", progress: goOn(1, {}, walletSearch) };
  }
  const walletTx = walletSearch.tx;
  const txHash = txHashHex(walletTx);
  const took: TraceProgress = { wallet: positionOf(walletTx) };
  const toJettonWallet = internalTo(walletTx, input.jettonWallet, JETTON_OP.transfer);
  if (!toJettonWallet || toJettonWallet.info.type !== "internal") {
    return { state: "failed", txHash, reason: "the wallet took the message but sent nothing (not enough TON for the attached amount and fees?)" };
  }

  const senderSearch = await locate(2, toJettonWallet.info.dest, receives(toJettonWallet), progress.sender);
  if (senderSearch === "none") return { state: "in-flight", txHash, progress: took };
  if (!("tx" in senderSearch)) return { state: "in-flight", txHash, progress: goOn(2, took, senderSearch) };
  const senderTx = senderSearch.tx;
  const sender = succeeded(senderTx);
  if (!sender.ok) {
    return { state: "failed", txHash, reason: `the sender's jetton wallet refused the transfer (exit code ${sender.exitCode}) and bounced it: nothing moved` };
  }
  const toRecipient = internalTo(senderTx, null, JETTON_OP.internalTransfer);
  if (!toRecipient || toRecipient.info.type !== "internal") {
    return { state: "failed", txHash, reason: "the sender's jetton wallet sent no internal_transfer: nothing moved" };
  }
  const executed: TraceProgress = { ...took, sender: positionOf(senderTx) };

  const recipientSearch = await locate(3, toRecipient.info.dest, receives(toRecipient));
  if (recipientSearch === "none") return { state: "in-flight", txHash, progress: executed };
  if (!("tx" in recipientSearch)) return { state: "in-flight", txHash, progress: goOn(3, executed, recipientSearch) };
  const recipientTx = recipientSearch.tx;
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
