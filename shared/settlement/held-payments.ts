import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { heldPayments } from "../../db/schema/settlement-tracking.ts";
import type { LiveChain } from "../chains/live/live-config.ts";
import type { Observation } from "./classify-transaction.ts";

/** The first wait before a held payment is tried again; it doubles per attempt up to HELD_BACKOFF_MAX_MS. */
export const HELD_BACKOFF_BASE_MS = 60_000;
export const HELD_BACKOFF_MAX_MS = 60 * 60_000;
/** Held payments one poll tries again at most, soonest due first. */
export const HELD_RETRY_PAGE = 50;
const MAX_ERROR_CHARS = 500;

export const heldBackoffMs = (attempts: number) => Math.min(HELD_BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), HELD_BACKOFF_MAX_MS);

/**
 * Whose held payments: on TON the tenant whose COLLECTIONS wallet was paid
 * (each (tenant, wallet) is read on its own, so one transaction can be held
 * once per tenant); on EVM, whose chain is read as a whole, null.
 */
export type HeldScope = { chain: LiveChain; tenantId: string | null };

/** A held payment due again: what was read, and (EVM) its block's hash as read then. */
export type HeldPayment = { obs: Observation; blockHash: string | null };

type StoredObservation = Omit<Observation, "amount"> & { amount: string };

const storedObservation = (obs: Observation): string => JSON.stringify({ ...obs, amount: obs.amount.toString() } satisfies StoredObservation);
const observationOf = (stored: string): Observation => {
  const obs = JSON.parse(stored) as StoredObservation;
  return { ...obs, amount: BigInt(obs.amount) };
};

const tenantKey = (tenantId: string | null) => tenantId ?? "";

/**
 * Holds a payment that could not be applied (`reason`: why), or counts one
 * more failed attempt of one already held, and sets when it is tried next.
 * Throws when it cannot be stored: the poll then fails with its cursor kept,
 * so a payment is never passed over unheld.
 */
export async function holdPayment(db: Db, scope: HeldScope, held: HeldPayment, reason: string, now: Date): Promise<number> {
  const { obs, blockHash } = held;
  const lastError = reason.slice(0, MAX_ERROR_CHARS);
  const read = { blockNumber: obs.blockNumber, blockHash, observation: storedObservation(obs) };
  const [row] = await db
    .insert(heldPayments)
    .values({
      chain: scope.chain,
      txHash: obs.txHash,
      logIndex: obs.logIndex,
      kind: obs.kind,
      tenantId: tenantKey(scope.tenantId),
      ...read,
      attempts: 1,
      lastError,
      nextAttemptAt: new Date(now.getTime() + heldBackoffMs(1)),
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [heldPayments.chain, heldPayments.txHash, heldPayments.logIndex, heldPayments.kind, heldPayments.tenantId],
      set: {
        // As last read (a payment re-mined in another block after a reorg is the same payment there).
        ...read,
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
export async function releaseHeld(db: Db, scope: HeldScope, obs: Observation) {
  await db
    .delete(heldPayments)
    .where(
      and(
        eq(heldPayments.chain, scope.chain),
        eq(heldPayments.txHash, obs.txHash),
        eq(heldPayments.logIndex, obs.logIndex),
        eq(heldPayments.kind, obs.kind),
        eq(heldPayments.tenantId, tenantKey(scope.tenantId)),
      ),
    );
}

/** The held payments of `scope` due for another attempt, soonest due first. */
export async function dueHeldPayments(db: Db, scope: HeldScope, now: Date, limit = HELD_RETRY_PAGE): Promise<HeldPayment[]> {
  const rows = await db
    .select({ observation: heldPayments.observation, blockHash: heldPayments.blockHash })
    .from(heldPayments)
    .where(and(eq(heldPayments.chain, scope.chain), eq(heldPayments.tenantId, tenantKey(scope.tenantId)), lte(heldPayments.nextAttemptAt, now)))
    .orderBy(asc(heldPayments.nextAttemptAt), asc(heldPayments.blockNumber))
    .limit(limit);
  return rows.map((r) => ({ obs: observationOf(r.observation), blockHash: r.blockHash }));
}

/**
 * The transaction of a payment to the same loan, made before `obs` (an
 * earlier block, or earlier in the block), that is held; null when none. A
 * later payment applied first would be judged as if the earlier one had not
 * been made: a late fee it did not owe, `loan.overdue` or `loan.defaulted`
 * for a borrower who paid on time (a review). So it waits behind it.
 */
async function heldBefore(db: Db, scope: HeldScope, obs: Observation): Promise<string | null> {
  if (obs.kind !== "payment" || !obs.loanId) return null;
  const [row] = await db
    .select({ txHash: heldPayments.txHash })
    .from(heldPayments)
    .where(
      and(
        eq(heldPayments.chain, scope.chain),
        eq(heldPayments.tenantId, tenantKey(scope.tenantId)),
        eq(heldPayments.kind, "payment"),
        sql`(${heldPayments.blockNumber} < ${obs.blockNumber} OR (${heldPayments.blockNumber} = ${obs.blockNumber} AND ${heldPayments.logIndex} < ${obs.logIndex}))`,
        sql`json_extract(${heldPayments.observation}, '$.loanId') = ${obs.loanId}`,
      ),
    )
    .limit(1);
  return row?.txHash ?? null;
}

/** What a listener's report says of held payments. */
export type HeldReport = {
  /** Payments this poll could not apply (read now, or held before and failing again): held, tried again later. */
  held?: number;
  /** Payments held before and applied this poll. */
  heldApplied?: number;
  /** Why the first of them could not be applied. */
  heldError?: string;
};

/**
 * Runs `apply` for one payment; when it throws, holds the payment for a
 * later poll instead (only a failure to hold it throws). `retry`: a held
 * payment due again, released once applied. `reasonOf`: the error's words
 * to keep (without secrets such as an RPC URL).
 */
export async function applyOrHold(
  db: Db,
  scope: HeldScope,
  held: HeldPayment,
  apply: () => Promise<unknown>,
  report: HeldReport,
  options: { now: () => Date; retry?: boolean; reasonOf?: (error: unknown) => string },
): Promise<void> {
  try {
    const before = await heldBefore(db, scope, held.obs);
    if (before)
      throw new Error(`waits for the payment ${before} to the same loan, made before it and held: payments to a loan apply in the order they were made`);
    await apply();
  } catch (error) {
    const reason = options.reasonOf ? options.reasonOf(error) : error instanceof Error ? error.message : String(error);
    await holdPayment(db, scope, held, reason, options.now());
    report.held = (report.held ?? 0) + 1;
    report.heldError ??= reason;
    return;
  }
  if (options.retry) {
    await releaseHeld(db, scope, held.obs);
    report.heldApplied = (report.heldApplied ?? 0) + 1;
  }
}

/** A held payment as the operator sees it (GET /v1/operator/held-payments). */
export type HeldPaymentView = Omit<typeof heldPayments.$inferSelect, "observation" | "tenantId" | "blockHash"> & {
  tenantId: string | null;
  loanId: string | null;
  amount: bigint;
  to: string;
};

/** Every held payment, oldest first (at most `limit`): what the listeners could not apply yet, with why and when they try next. */
export async function listHeldPayments(db: Db, limit: number): Promise<HeldPaymentView[]> {
  const rows = await db.select().from(heldPayments).orderBy(asc(heldPayments.createdAt), asc(heldPayments.txHash)).limit(limit);
  return rows.map(({ observation, tenantId, blockHash: _, ...row }) => {
    const obs = observationOf(observation);
    return { ...row, tenantId: tenantId === "" ? null : tenantId, loanId: obs.loanId, amount: obs.amount, to: obs.to };
  });
}
