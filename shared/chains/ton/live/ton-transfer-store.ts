import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../../db/create-db.ts";
import { type TonTransferRow, tonTransfers } from "../../../../db/schema/ton.ts";
import type { TraceProgress, TxPosition } from "./trace-jetton-transfer.ts";

/** A signed attempt of a reference's transfer, as stored before it is broadcast. */
export type TonAttempt = Pick<
  TonTransferRow,
  "reference" | "tenantId" | "wallet" | "jettonWallet" | "toAddress" | "amount" | "queryId" | "seqno" | "validUntil" | "messageHash"
>;

export const findTonTransfer = async (db: Db, reference: string): Promise<TonTransferRow | null> =>
  (await db.select().from(tonTransfers).where(eq(tonTransfers.reference, reference)).limit(1))[0] ?? null;

/** The in-flight transfer of a wallet (another reference's), if any. */
export const inFlightFrom = async (db: Db, wallet: string): Promise<TonTransferRow | null> =>
  (
    await db
      .select()
      .from(tonTransfers)
      .where(and(eq(tonTransfers.wallet, wallet), eq(tonTransfers.status, "SENT")))
      .limit(1)
  )[0] ?? null;

type StoredPosition = { lt: string; hash: string };
type StoredTrace = { wallet?: StoredPosition; sender?: StoredPosition; resumeAt?: StoredPosition; walkFrom?: number };

const storePosition = (p: TxPosition | undefined): StoredPosition | undefined => p && { lt: p.lt.toString(), hash: p.hash.toString("hex") };
const readPosition = (p: StoredPosition | undefined): TxPosition | undefined => p && { lt: BigInt(p.lt), hash: Buffer.from(p.hash, "hex") };

/** A trace's progress as stored (lt decimal, hash hex); null when there is nothing to go on from. */
export function storedTrace(progress: TraceProgress | null): string | null {
  if (!progress) return null;
  const stored: StoredTrace = {
    wallet: storePosition(progress.wallet),
    sender: storePosition(progress.sender),
    resumeAt: storePosition(progress.resumeAt),
    walkFrom: progress.walkFrom,
  };
  // Keys left undefined are dropped: a progress of nothing is no progress.
  const json = JSON.stringify(stored);
  return json === "{}" ? null : json;
}

const isPosition = (p: unknown): p is StoredPosition =>
  typeof p === "object" && p !== null && /^\d{1,20}$/.test(String((p as StoredPosition).lt)) && /^[0-9a-f]{64}$/.test(String((p as StoredPosition).hash));

/**
 * The progress stored with an attempt (ton_transfers.trace). Anything but
 * what `storedTrace` writes (and a waypoint without the time its walk began,
 * which could not prove anything) reads as no progress: the next trace starts
 * a fresh walk, which is always safe.
 */
export function traceOf(row: Pick<TonTransferRow, "trace">): TraceProgress | null {
  if (!row.trace) return null;
  let stored: StoredTrace;
  try {
    stored = JSON.parse(row.trace) as StoredTrace;
  } catch {
    return null;
  }
  if (typeof stored !== "object" || stored === null) return null;
  if ([stored.wallet, stored.sender, stored.resumeAt].some((p) => p !== undefined && !isPosition(p))) return null;
  if (stored.resumeAt && typeof stored.walkFrom !== "number") return null;
  return {
    wallet: readPosition(stored.wallet),
    sender: readPosition(stored.sender),
    resumeAt: readPosition(stored.resumeAt),
    walkFrom: stored.walkFrom,
  };
}

const isUniqueViolation = (error: unknown) => /UNIQUE constraint failed/i.test(String((error as { cause?: unknown })?.cause ?? "") + String(error));

/**
 * Stores an attempt as SENT, before it is broadcast: a new reference, or a new
 * attempt of one whose last attempt failed (nothing moved) or expired unseen
 * (`replacing` its message hash). `claimed`: this call owns the attempt and
 * may broadcast it; `taken`: another call stored one for the reference first;
 * `busy`: the wallet has another reference's message in flight.
 */
export async function claimAttempt(db: Db, attempt: TonAttempt, now: Date, replacing?: { status: "FAILED" | "SENT"; messageHash: string }) {
  try {
    const rows = replacing
      ? await db
          .update(tonTransfers)
          .set({ ...attempt, status: "SENT", txHash: null, txLt: null, errorReason: null, confirmedAt: null, trace: null, updatedAt: now })
          .where(
            and(eq(tonTransfers.reference, attempt.reference), eq(tonTransfers.status, replacing.status), eq(tonTransfers.messageHash, replacing.messageHash)),
          )
          .returning({ reference: tonTransfers.reference })
      : await db
          .insert(tonTransfers)
          .values({ ...attempt, status: "SENT", createdAt: now, updatedAt: now })
          .onConflictDoNothing({ target: tonTransfers.reference })
          .returning({ reference: tonTransfers.reference });
    return rows.length > 0 ? ("claimed" as const) : ("taken" as const);
  } catch (error) {
    if (isUniqueViolation(error)) return "busy" as const;
    throw error;
  }
}

/**
 * The wallet took the attempt with `messageHash` (its transaction `txHash` sent the jetton transfer on): its seqno
 * is used, so the row no longer holds the wallet (TAKEN), and it is never signed again. `trace`: how far the trace
 * that saw it got.
 */
export async function markTaken(db: Db, row: Pick<TonTransferRow, "reference" | "messageHash">, txHash: string, trace: string | null, now: Date) {
  await db
    .update(tonTransfers)
    .set({ status: "TAKEN", txHash, trace, updatedAt: now })
    .where(and(eq(tonTransfers.reference, row.reference), eq(tonTransfers.messageHash, row.messageHash), eq(tonTransfers.status, "SENT")));
}

/** Records how far a trace of the attempt with `messageHash` got (while it is in flight), for the next to go on from. */
export async function saveTrace(db: Db, row: Pick<TonTransferRow, "reference" | "messageHash">, trace: string | null, now: Date) {
  await db
    .update(tonTransfers)
    .set({ trace, updatedAt: now })
    .where(and(eq(tonTransfers.reference, row.reference), eq(tonTransfers.messageHash, row.messageHash), inArray(tonTransfers.status, ["SENT", "TAKEN"])));
}

/** Records the outcome of the attempt with `messageHash` (only that attempt's row, only while it is SENT or TAKEN). */
export async function settleAttempt(
  db: Db,
  row: Pick<TonTransferRow, "reference" | "messageHash">,
  outcome: { status: "CONFIRMED"; txHash: string; txLt: bigint; confirmedAt: Date } | { status: "FAILED"; txHash: string | null; errorReason: string },
  now: Date,
) {
  await db
    .update(tonTransfers)
    .set(
      outcome.status === "CONFIRMED"
        ? { status: "CONFIRMED", txHash: outcome.txHash, txLt: outcome.txLt.toString(), confirmedAt: outcome.confirmedAt, updatedAt: now }
        : { status: "FAILED", txHash: outcome.txHash, errorReason: outcome.errorReason, updatedAt: now },
    )
    .where(and(eq(tonTransfers.reference, row.reference), eq(tonTransfers.messageHash, row.messageHash), inArray(tonTransfers.status, ["SENT", "TAKEN"])));
}
