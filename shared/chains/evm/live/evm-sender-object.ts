import { DurableObject } from "cloudflare:workers";
import { EvmSenderBook } from "./evm-sender-book.ts";
import type { EvmClaim, EvmSendRecord, EvmSignedTx } from "./evm-send-record.ts";

/**
 * One Durable Object per live EVM sender (`idFromName("<chain>:<address>")`):
 * the single writer of that wallet's nonces, so concurrent fundings from one
 * DISBURSEMENT wallet (api requests, loan objects, the cron retry) get
 * consecutive nonces and a refused broadcast gives its nonce back. It keeps
 * state only; signing and the RPC calls happen in the caller
 * (evm-transfer.ts), so no key ever reaches the object. Every method takes
 * the sender's name (an object cannot read its own); the book marks its
 * storage with it and refuses another. Exported from the api worker's entry;
 * others use `durableEvmSenders`.
 */
export class EvmSenderObject extends DurableObject {
  private book: EvmSenderBook | null = null;

  get(name: string, reference: string): Promise<EvmSendRecord | null> {
    return this.bookFor(name).get(reference);
  }

  claim(name: string, reference: string, pendingCount: number, reservation?: number): Promise<EvmClaim> {
    return this.bookFor(name).claim(reference, pendingCount, reservation);
  }

  addSigned(name: string, reference: string, tx: EvmSignedTx, reservation?: number): Promise<EvmSendRecord | null> {
    return this.bookFor(name).addSigned(reference, tx, reservation);
  }

  close(name: string, reference: string, reservation: number): Promise<EvmSendRecord | null> {
    return this.bookFor(name).close(reference, reservation);
  }

  release(name: string, reference: string, hash: string, reusable: boolean): Promise<void> {
    return this.bookFor(name).release(reference, hash, reusable);
  }

  fail(name: string, reference: string, reason: string, attempt?: number): Promise<EvmSendRecord | null> {
    return this.bookFor(name).fail(reference, reason, attempt);
  }

  sawNonceUsed(name: string, reference: string, attempt: number, at: string): Promise<EvmSendRecord | null> {
    return this.bookFor(name).sawNonceUsed(reference, attempt, at);
  }

  claimGap(name: string, nonce: number, pendingCount: number): Promise<EvmClaim> {
    return this.bookFor(name).claimGap(nonce, pendingCount);
  }

  private bookFor(name: string): EvmSenderBook {
    if (!this.book) this.book = new EvmSenderBook(this.ctx.storage, name);
    else if (this.book.name !== name) throw new Error(`this object keeps ${this.book.name}, not ${name}`);
    return this.book;
  }
}
