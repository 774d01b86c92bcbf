import type { SimStorage } from "../../simulated/sim-storage.ts";
import { type EvmClaim, type EvmSendRecord, type EvmSenderLedger, type EvmSignedTx, gapReference } from "./evm-send-record.ts";

/** The sender's nonce state: the next fresh nonce (null until the node was asked) and nonces released below it, lowest first. */
type NonceState = { name: string; next: number | null; freed: number[] };

const refKey = (reference: string) => `ref:${reference}`;
/** The highest reservation a reference is closed to (see `close`). */
const closedKey = (reference: string) => `closed:${reference}`;

/** Whether a call naming `reservation` (or none) is shut out by a close through `closedThrough`. */
const shutOut = (closedThrough: number | undefined, reservation: number | undefined) =>
  closedThrough !== undefined && (reservation === undefined || reservation <= closedThrough);

/**
 * The nonce book of one (chain, sender) over a key-value storage (a Durable
 * Object's `ctx.storage`, or memory in the Bun tier). Calls run one at a
 * time, in order: the Durable Object's input gate already keeps a call that
 * only awaits its storage whole, and the queue here makes the same hold for
 * the in-memory book, whose awaits would otherwise interleave.
 */
export class EvmSenderBook implements EvmSenderLedger {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: SimStorage,
    readonly name: string,
  ) {}

  get(reference: string): Promise<EvmSendRecord | null> {
    return this.serial(async () => (await this.storage.get<EvmSendRecord>(refKey(reference))) ?? null);
  }

  claim(reference: string, pendingCount: number, reservation?: number): Promise<EvmClaim> {
    return this.serial(async () => {
      if (shutOut(await this.storage.get<number>(closedKey(reference)), reservation)) return { claimed: false, record: null };
      const existing = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (existing && !existing.failed) return { claimed: false, record: existing };
      const state = await this.state();
      // Nonces below the node's pending count are used (by us or by another sender of this wallet): never hand them out.
      const freed = state.freed.filter((n) => n >= pendingCount);
      const next = Math.max(state.next ?? pendingCount, pendingCount);
      const nonce = freed.length > 0 ? freed.shift()! : next;
      const record: EvmSendRecord = {
        reference,
        nonce,
        attempt: (existing?.attempt ?? 0) + 1,
        ...(reservation !== undefined ? { reservation } : {}),
        txs: [],
        firstBroadcastAt: null,
        failed: null,
      };
      await this.storage.put({ state: { ...state, next: nonce === next ? next + 1 : next, freed }, [refKey(reference)]: record });
      return { claimed: true, record };
    });
  }

  addSigned(reference: string, tx: EvmSignedTx, reservation?: number): Promise<EvmSendRecord | null> {
    return this.serial(async () => {
      if (shutOut(await this.storage.get<number>(closedKey(reference)), reservation)) return null;
      const record = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (!record || record.failed) return null;
      // Two runs signing the same nonce with the same fees make the same bytes: one transaction, each run's copy
      // counted, so one run's refusal (a node behind a balancer other than the one that took it) leaves the other's.
      if (record.txs.some((t) => t.hash === tx.hash)) {
        const counted: EvmSendRecord = { ...record, txs: record.txs.map((t) => (t.hash === tx.hash ? { ...t, copies: (t.copies ?? 1) + 1 } : t)) };
        await this.storage.put(refKey(reference), counted);
        return counted;
      }
      const next: EvmSendRecord = { ...record, txs: [...record.txs, tx], firstBroadcastAt: record.firstBroadcastAt ?? tx.sentAt };
      await this.storage.put(refKey(reference), next);
      return next;
    });
  }

  close(reference: string, reservation: number): Promise<EvmSendRecord | null> {
    return this.serial(async () => {
      const record = await this.storage.get<EvmSendRecord>(refKey(reference));
      const live = record && !record.failed ? record : null;
      // Signed, maybe broadcast: it may still be mined, so that transaction is the answer and nothing closes.
      if (live && live.txs.length > 0) return live;
      const closedThrough = await this.storage.get<number>(closedKey(reference));
      const writes: Record<string, unknown> = { [closedKey(reference)]: Math.max(closedThrough ?? reservation, reservation) };
      // A nonce claimed under a reservation now closed and not signed yet: its claimer's signature will be refused, so it is given back.
      if (live && (live.reservation === undefined || live.reservation <= reservation)) {
        writes.state = this.givenBack(await this.state(), live.nonce, true);
        writes[refKey(reference)] = { ...live, failed: "closed before anything was signed" };
      }
      await this.storage.put(writes);
      return null;
    });
  }

  release(reference: string, hash: string, reusable: boolean): Promise<void> {
    return this.serial(async () => {
      const record = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (!record) return;
      const copy = record.txs.find((tx) => tx.hash === hash);
      // Another run's copy of the same bytes may have been taken: only its own copy is given back.
      if (copy && (copy.copies ?? 1) > 1) {
        const txs = record.txs.map((tx) => (tx.hash === hash ? { ...tx, copies: (copy.copies ?? 1) - 1 } : tx));
        return this.storage.put(refKey(reference), { ...record, txs });
      }
      const txs = record.txs.filter((tx) => tx.hash !== hash);
      // Another transaction of this nonce may still be mined (a refused replacement): the record keeps the nonce.
      if (txs.length > 0) return this.storage.put(refKey(reference), { ...record, txs });
      const state = this.givenBack(await this.state(), record.nonce, reusable);
      await this.storage.put({ state, [refKey(reference)]: { ...record, txs, failed: "not broadcast" } });
      // Kept as failed (not deleted) so the attempt counter survives; a failed record is re-claimed with a new nonce.
    });
  }

  fail(reference: string, reason: string, attempt?: number): Promise<EvmSendRecord | null> {
    return this.serial(async () => {
      const record = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (!record) return null;
      // Another attempt is current now (this one failed or was closed and the reference claimed again): not this call's to fail.
      // (`attempt` undefined: a caller from before it was passed, during a deploy, judged the current one as before.)
      if (record.failed || (attempt !== undefined && record.attempt !== attempt)) return record;
      const failed = { ...record, failed: reason };
      await this.storage.put(refKey(reference), failed);
      return failed;
    });
  }

  claimGap(nonce: number, pendingCount: number): Promise<EvmClaim> {
    return this.serial(async () => {
      const reference = gapReference(nonce);
      const existing = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (existing && !existing.failed && existing.nonce === nonce) return { claimed: false, record: existing };
      const state = await this.state();
      // Only a nonce the book gave back and nobody took since; one below the node's pending count is used already.
      if (nonce < pendingCount || !state.freed.includes(nonce)) return { claimed: false, record: null };
      const record: EvmSendRecord = { reference, nonce, attempt: (existing?.attempt ?? 0) + 1, txs: [], firstBroadcastAt: null, failed: null };
      await this.storage.put({ state: { ...state, freed: state.freed.filter((n) => n !== nonce) }, [refKey(reference)]: record });
      return { claimed: true, record };
    });
  }

  sawNonceUsed(reference: string, attempt: number, at: string): Promise<EvmSendRecord | null> {
    return this.serial(async () => {
      const record = await this.storage.get<EvmSendRecord>(refKey(reference));
      if (!record || record.failed || record.attempt !== attempt || record.nonceUsedSeenAt) return record ?? null;
      const seen = { ...record, nonceUsedSeenAt: at };
      await this.storage.put(refKey(reference), seen);
      return seen;
    });
  }

  /** The state with `nonce` back for the next claim (`reusable`: never sent), or skipped (the node says it is used). */
  private givenBack(state: NonceState, nonce: number, reusable: boolean): NonceState {
    let { next, freed } = state;
    if (!reusable) next = Math.max(next ?? 0, nonce + 1);
    else if (next === nonce + 1) next = nonce;
    else freed = [...freed, nonce].sort((a, b) => a - b);
    return { ...state, next, freed };
  }

  private async state(): Promise<NonceState> {
    const state = await this.storage.get<NonceState>("state");
    if (state && state.name !== this.name) throw new Error(`this ledger is ${state.name}, not ${this.name}`);
    return state ?? { name: this.name, next: null, freed: [] };
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
