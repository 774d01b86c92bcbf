import { and, asc, eq, isNull, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { heldPayments } from "../../db/schema/settlement-tracking.ts";
import type { LiveChain } from "../chains/live/live-config.ts";
import type { Observation } from "./classify-transaction.ts";

/** The first wait before a held payment is tried again; it doubles per attempt up to HELD_BACKOFF_MAX_MS. */
export const HELD_BACKOFF_BASE_MS = 60_000;
export const HELD_BACKOFF_MAX_MS = 60 * 60_000;
/** Held payments one poll tries again at most, oldest due first. */
export const HELD_RETRY_PAGE = 50;
const MAX_ERROR_CHARS = 500;

export const heldBackoffMs = (attempts: number) => Math.min(HELD_BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), HELD_BACKOFF_MAX_MS);

type StoredObservation = Omit<Observation, "amount"> & { amount: string };

const storedObservation = (obs: Observation): string => JSON.stringify({ ...obs, amount: obs.amount.toString() } satisfies StoredObservation);
const observationOf = (stored: string): Observation => {
  const obs = JSON.parse(stored) as StoredObservation;
  return { ...obs, amount: BigInt(obs.amount) };
};

const identity = (obs: Observation) =>
  and(eq(heldPayments.chain, obs.chain), eq(heldPayments.txHash, obs.txHash), eq(heldPayments.logIndex, obs.logIndex), eq(heldPayments.kind, obs.kind));

/**
 * Holds a payment that could not be applied (`reason`: why), or counts one
 * more failed attempt of one already held, and sets when it is tried next.
 * Throws when it cannot be stored: the poll then fails with its cursor kept,
 * so a payment is never passed over unheld.
 */
export async function holdPayment(db: Db, obs: Observation, reason: string, now: Date, tenantId: string | null = null): Promise<number> {
  const lastError = reason.slice(0, MAX_ERROR_CHARS);
  const [row] = await db
    .insert(heldPayments)
    .values({
      chain: obs.chain,
      txHash: obs.txHash,
      logIndex: obs.logIndex,
      kind: obs.kind,
      tenantId,
      blockNumber: obs.blockNumber,
      observation: storedObservation(obs),
      attempts: 1,
      lastError,
      nextAttemptAt: new Date(now.getTime() + heldBackoffMs(1)),
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [heldPayments.chain, heldPayments.txHash, heldPayments.logIndex, heldPayments.kind],
      set: {
        attempts: sql`${heldPayments.attempts} + 1`,
        lastError,
        nextAttemptAt: sql`${now.getTime()} + min(${HELD_BACKOFF_BASE_MS} * (1 << min(${heldPayments.attempts}, 16)), ${HELD_BACKOFF_MAX_MS})`,
        updatedAt: now,
      },
    })
    .returning({ attempts: heldPayments.attempts });
  return row?.attempts ?? 1;
}

/** A held payment applied at last: no longer held. */
export async function releaseHeld(db: Db, obs: Observation) {
  await db.delete(heldPayments).where(identity(obs));
}

/** The held payments of `chain` (of `tenantId`'s COLLECTIONS wallets on TON; null on EVM) due for another attempt, oldest due first. */
export async function dueHeldPayments(db: Db, chain: LiveChain, tenantId: string | null, now: Date, limit = HELD_RETRY_PAGE): Promise<Observation[]> {
  const rows = await db
    .select({ observation: heldPayments.observation })
    .from(heldPayments)
    .where(
      and(
        eq(heldPayments.chain, chain),
        tenantId === null ? isNull(heldPayments.tenantId) : eq(heldPayments.tenantId, tenantId),
        lte(heldPayments.nextAttemptAt, now),
      ),
    )
    .orderBy(asc(heldPayments.nextAttemptAt), asc(heldPayments.blockNumber))
    .limit(limit);
  return rows.map((r) => observationOf(r.observation));
}

/** A held payment as the operator sees it (GET /v1/operator/held-payments). */
export type HeldPaymentView = Omit<typeof heldPayments.$inferSelect, "observation"> & { loanId: string | null; amount: bigint; to: string };

/** Every held payment, oldest first (at most `limit`): what the listeners could not apply yet, with why and when they try next. */
export async function listHeldPayments(db: Db, limit: number): Promise<HeldPaymentView[]> {
  const rows = await db.select().from(heldPayments).orderBy(asc(heldPayments.createdAt), asc(heldPayments.txHash)).limit(limit);
  return rows.map(({ observation, ...row }) => {
    const obs = observationOf(observation);
    return { ...row, loanId: obs.loanId, amount: obs.amount, to: obs.to };
  });
}
