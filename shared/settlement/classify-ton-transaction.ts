import type { Address, Transaction } from "@ton/core";
import { parseRepaymentComment } from "../chains/repayment-instructions.ts";
import { JETTON_OP, jettonHeader, messageComment, parseTransferNotification } from "../chains/ton/jetton-messages.ts";
import type { Observation } from "./classify-transaction.ts";

/** What one incoming transaction of a COLLECTIONS wallet means: a USDT payment to apply, value to keep as unmatched, or nothing. */
/** `settles`: false when the payment moved no USDT (a TON transfer, a notification from another jetton wallet): kept, never attributable. */
export type TonFinding = { kind: "payment"; payment: Observation } | { kind: "unmatched"; payment: Observation; reason: string; settles?: boolean };

/** A TON transaction's hash as the service stores it: hex. */
export const tonTxHash = (tx: Transaction) => tx.hash().toString("hex");

/**
 * Reads one transaction of the COLLECTIONS wallet `owner` (issue 13 item 5).
 * Only a `transfer_notification` from `jettonWallet` (the canonical USDT
 * jetton wallet of `owner`, from the master's `get_wallet_address`) is a
 * payment: only that contract can send from that address, and it sends the
 * notification after it credited the jettons. Its loan comes from the exact
 * comment `svc:repay:<loanId>` (none: the payment names no loan). A
 * notification from any other contract (another jetton, a forgery) and a plain
 * TON transfer carry value that is not USDT: unmatched. Bounced messages (our
 * own sends coming back), excesses (gas change of our own sends) and empty
 * messages: nothing.
 */
export function classifyTonTransaction(
  tx: Transaction,
  { owner, jettonWallet, master }: { owner: Address; jettonWallet: Address; master: Address },
): TonFinding[] {
  const message = tx.inMessage;
  if (!message || message.info.type !== "internal" || message.info.bounced) return [];
  const src = message.info.src;
  const base = {
    chain: "TON" as const,
    txHash: tonTxHash(tx),
    logIndex: 0,
    // TON has no per-account block number: the transaction's logical time stands for it.
    blockNumber: Number(tx.lt),
    timestamp: tx.now,
    to: owner.toRawString(),
    sandboxTenantId: null,
  };
  const header = jettonHeader(message.body);
  if (header?.op === JETTON_OP.excesses) return [];
  const notification = header?.op === JETTON_OP.transferNotification ? parseTransferNotification(message.body) : null;
  if (notification) {
    // Nothing moved: a zero transfer is no payment, whatever it names (anyone can send one for the fee), as for TON below.
    if (notification.amount <= 0n) return [];
    const from = (notification.sender ?? src).toRawString();
    const comment = notification.comment;
    if (src.equals(jettonWallet)) {
      const loanId = parseRepaymentComment(comment);
      const payment = { ...base, kind: "payment" as const, from, token: master.toRawString(), amount: notification.amount, loanId, comment };
      return [
        loanId
          ? { kind: "payment", payment }
          : { kind: "unmatched", payment, reason: comment === null ? "no loan reference (missing comment)" : "the comment is not svc:repay:<loanId>" },
      ];
    }
    const payment = {
      ...base,
      kind: "payment" as const,
      from,
      token: src.toRawString(),
      amount: notification.amount,
      loanId: parseRepaymentComment(comment),
      comment,
    };
    return [
      {
        kind: "unmatched",
        payment,
        reason: `a jetton transfer from the jetton wallet ${src.toRawString()}, not the USDT jetton wallet of this COLLECTIONS wallet`,
        settles: false,
      },
    ];
  }
  const value = message.info.value.coins;
  if (value <= 0n) return [];
  const comment = messageComment(message.body);
  const payment = { ...base, kind: "payment" as const, from: src.toRawString(), token: "TON", amount: value, loanId: parseRepaymentComment(comment), comment };
  return [{ kind: "unmatched", payment, reason: "a TON transfer, not USDT", settles: false }];
}
