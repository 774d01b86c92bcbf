import type { Chain } from "../../../domain/rails.ts";

/**
 * One signed transaction of a transfer: its hash, its raw bytes (public once
 * broadcast; kept so a transaction the node dropped can be sent again
 * unchanged), its fees as decimal strings (so the record crosses Durable
 * Object RPC and storage as plain data), and when it was sent.
 */
export type EvmSignedTx = {
  hash: string;
  raw: string;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** ISO time it was handed to the node. */
  sentAt: string;
  /** Runs that signed these same bytes (the same nonce and fees make the same transaction); absent: 1. */
  copies?: number;
};

/**
 * What a sender remembers of one transfer reference (`funding:<loanId>`):
 * the nonce it holds and every transaction signed for it (the first and its
 * fee-bumped replacements, all of that one nonce, so at most one is ever
 * mined). `failed` is set once the nonce was spent without moving the money
 * (the transaction reverted, or another transaction used the nonce); the
 * next transfer with that reference is then a new attempt with a new nonce.
 */
export type EvmSendRecord = {
  reference: string;
  nonce: number;
  attempt: number;
  /** The caller's reservation the nonce was claimed under (`TransferRequest.reservation`); absent when none was named. */
  reservation?: number;
  txs: EvmSignedTx[];
  firstBroadcastAt: string | null;
  failed: string | null;
  /** When a follow first saw the nonce used with no receipt of ours (ISO): the verdict must hold on a later follow too. */
  nonceUsedSeenAt?: string;
};

/**
 * The answer to a claim: a new nonce for the reference (`claimed`), the
 * record another call already holds for it, or no record: the reference is
 * closed to the caller's reservation (see `close`), so nothing may be signed.
 */
export type EvmClaim = { claimed: true; record: EvmSendRecord } | { claimed: false; record: EvmSendRecord } | { claimed: false; record: null };

/**
 * The single writer of one (chain, sender): its next nonce and its records by
 * reference. Every method is whole (no interleaving inside one sender), so
 * concurrent transfers from one wallet get distinct, consecutive nonces.
 * Implemented by `EvmSenderObject` (a Durable Object named
 * `<chain>:<address>`) in the workers and by `memoryEvmSenders` in Bun.
 */
export interface EvmSenderLedger {
  /** The record of `reference`, or null. */
  get(reference: string): Promise<EvmSendRecord | null>;
  /**
   * A nonce for `reference` unless it already holds a live one (then that
   * record, unclaimed). `pendingCount` is the node's `eth_getTransactionCount(pending)`
   * for the sender: it initialises the next nonce, lifts it past transactions
   * sent from the wallet by anyone else, and retires released nonces the
   * chain has since seen used.
   */
  claim(reference: string, pendingCount: number, reservation?: number): Promise<EvmClaim>;
  /**
   * Appends a transaction signed for the reference's nonce (before it is
   * broadcast, so a crash mid-broadcast still knows its hash). Null, and
   * nothing recorded, when the record has failed or the reference is closed
   * to `reservation`: the transaction must not be broadcast.
   */
  addSigned(reference: string, tx: EvmSignedTx, reservation?: number): Promise<EvmSendRecord | null>;
  /**
   * The node refused `hash`: forget it. When it was the reference's only
   * transaction, the record goes and its nonce returns to the sender (when
   * `reusable`; a nonce the node says is already used is skipped instead),
   * so the next transfer takes it and leaves no gap.
   */
  release(reference: string, hash: string, reusable: boolean): Promise<void>;
  /**
   * The reference's nonce was spent without moving the money: remember why; the next transfer with the reference
   * starts over. Only the `attempt` judged: a run that read an older attempt's fate (a stale run of a released
   * reservation) never fails the attempt in flight now.
   */
  fail(reference: string, reason: string, attempt?: number): Promise<EvmSendRecord | null>;
  /**
   * A follow saw `attempt`'s nonce used with no receipt of its transactions: remembers when it first did (`at`,
   * ISO), unless it already had, and answers the record. The attempt is failed only when a later follow sees the
   * same (a node behind a balancer may lack a receipt for a while).
   */
  sawNonceUsed(reference: string, attempt: number, at: string): Promise<EvmSendRecord | null>;
  /**
   * Closes the reference to `reservation` and every earlier one, unless a
   * transaction signed for it may still be mined (then that record, and
   * nothing closed): from then on no claim or signature naming such a
   * reservation (or none) is taken, and a nonce claimed for one but not yet
   * signed is voided and given back. What makes a failure final: a run still
   * holding an older reservation can never send after the loan released it.
   */
  close(reference: string, reservation: number): Promise<EvmSendRecord | null>;
  /**
   * A nonce gap to fill: `nonce` (the node's pending count, below a transfer that waits on it) when the book gave it
   * back and no claim took it since. It is claimed for the reference `gapReference(nonce)`, whose holder signs a
   * zero-value transaction to the sender itself with it, so what waits behind it is mined. The gap's record when it
   * was claimed before (signed or not: its holder sends it again); no record when the book does not hold the nonce
   * freed (another reference holds it and its own follow sends it, or the book never gave it out).
   */
  claimGap(nonce: number, pendingCount: number): Promise<EvmClaim>;
}

/** The reference of the zero-value transaction that fills a freed nonce (see `claimGap`). */
export const gapReference = (nonce: number) => `gap:${nonce}`;

/** Every live EVM sender's ledger, one per (chain, address). */
export interface EvmSenders {
  sender(chain: Chain, address: string): EvmSenderLedger;
}

/** The name of a sender's ledger (its Durable Object's name): `<chain>:<address lower-cased>`. */
export function senderName(chain: Chain, address: string): string {
  return `${chain}:${address.toLowerCase()}`;
}
