import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import type { EventEnvelope } from "../../db/schema/events.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loans } from "../../db/schema/loans.ts";
import { validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { displayAmount } from "../domain/money.ts";
import type { Stablecoin } from "../domain/rails.ts";
import { eventInsertIf } from "../events/loan-events.ts";
import { headroomOf, type PoolRow } from "../liquidity/pools.ts";
import { retryFunding, type SweepReport } from "../sweeps/run-sweeps.ts";
import type { VerbDeps } from "../verbs.ts";
import { SANDBOX_POOL_LOW_THRESHOLD_UNITS } from "../tenants/sign-up.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";

/** Pool amounts move in whole cents; anything else (a pool edited by hand) is shown exactly rather than refused. */

/** A pool as the API shows it (also the `pool` of `liquidity.low`). */
export const poolView = (pool: PoolRow) => ({
  id: pool.id,
  stablecoin: pool.stablecoin,
  available: displayAmount(pool.available),
  reserved: displayAmount(pool.reserved),
  headroom: displayAmount(headroomOf(pool)),
  lowThreshold: displayAmount(pool.lowThreshold),
});

const ownPool = async (db: Db, tenantId: string, stablecoin: Stablecoin) =>
  (
    await db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, tenantId), eq(liquidityPools.mode, "sandbox"), eq(liquidityPools.stablecoin, stablecoin)))
      // The pool `poolFor` draws from for sandbox loans: the tenant's oldest sandbox pool in this stablecoin (never a live one).
      .orderBy(asc(liquidityPools.createdAt), asc(liquidityPools.id))
      .limit(1)
  )[0];

/** Creates the tenant's own empty pool unless it has one; one statement, so two concurrent calls make one pool. */
async function ensureOwnPool(db: Db, tenantId: string, stablecoin: Stablecoin, lowThreshold: bigint, now: Date): Promise<PoolRow> {
  await insertIf(
    db,
    liquidityPools,
    { id: newId(), tenantId, mode: "sandbox", stablecoin, available: 0n, reserved: 0n, lowThreshold, lowAlertEventId: null, createdAt: now, updatedAt: now },
    sql`NOT EXISTS (SELECT 1 FROM ${liquidityPools} WHERE ${liquidityPools.tenantId} = ${tenantId} AND ${liquidityPools.mode} = 'sandbox' AND ${liquidityPools.stablecoin} = ${stablecoin})`,
  );
  return (await ownPool(db, tenantId, stablecoin))!;
}

export type SetSandboxLiquidityInput = {
  tenantId: string;
  stablecoin: Stablecoin;
  available: bigint;
  /** Omitted: the pool keeps its threshold (a new pool gets the signup default, 1,000.00). */
  lowThreshold?: bigint;
};

export type SetSandboxLiquidityResult = {
  pool: PoolRow;
  /** The funding retry that ran for the tenant's approved, unfunded loans. */
  retried: SweepReport;
  /** The tenant's approved loans still waiting for liquidity after the retry. */
  stillWaiting: number;
};

/** Pages of the tenant's waiting sandbox loans a liquidity change retries in its request (100 loans a page); the cron retries the rest. */
const SANDBOX_LIQUIDITY_RETRY_PAGES = 2;

/**
 * Sets the tenant's own sandbox pool for `stablecoin` (created if missing;
 * DECISIONS.md "Sandbox helpers"), then retries funding for the tenant's
 * loans waiting for liquidity, oldest first, before returning.
 *
 * `available` is the pool's balance, reservations included, so it may not
 * fall under what is reserved for loans being funded (400). The
 * `liquidity.low` alarm follows the new headroom: at or above the threshold
 * it is re-armed; under it, `liquidity.low` fires now unless it already
 * fired for the current dip, exactly as when a reservation takes headroom
 * under the threshold.
 */
export async function setSandboxLiquidity(
  { db, writer, clock: systemClock }: Pick<VerbDeps, "db" | "writer" | "clock">,
  input: SetSandboxLiquidityInput,
): Promise<SetSandboxLiquidityResult> {
  // No tenant-mode check: a certified tenant keeps its sandbox, and only sandbox keys reach this
  // (`requireMode`); it moves the tenant's own sandbox pool, never a live one (`ownPool`).
  const tenant = await loadTenant(db, input.tenantId);
  const now = tenantClock(systemClock, tenant, "sandbox").now();
  const pool = await ensureOwnPool(db, tenant.id, input.stablecoin, input.lowThreshold ?? SANDBOX_POOL_LOW_THRESHOLD_UNITS, now);

  const threshold = input.lowThreshold ?? pool.lowThreshold;
  const available = Number(input.available);
  const alert: EventEnvelope = {
    id: newId(),
    type: "liquidity.low",
    createdAt: now.toISOString(),
    tenantId: tenant.id,
    mode: "sandbox",
    data: { pool: poolView({ ...pool, available: input.available, lowThreshold: threshold }), loanId: null },
    program: null,
    channel: null,
  };
  const [updated] = await db.batch([
    db
      .update(liquidityPools)
      .set({
        available: input.available,
        lowThreshold: threshold,
        // SQLite evaluates the CASE on the row before the update: `reserved` is the current reservation.
        lowAlertEventId: sql`CASE
          WHEN ${available} - ${liquidityPools.reserved} >= ${Number(threshold)} THEN NULL
          WHEN ${liquidityPools.lowAlertEventId} IS NULL THEN ${alert.id}
          ELSE ${liquidityPools.lowAlertEventId} END` as unknown as string,
        updatedAt: now,
      })
      // Reservations belong to loans being funded right now; the balance cannot drop under them.
      .where(and(eq(liquidityPools.id, pool.id), sql`${liquidityPools.reserved} <= ${available}`))
      .returning({ id: liquidityPools.id }),
    eventInsertIf(
      db,
      alert,
      null,
      sql`EXISTS (SELECT 1 FROM ${liquidityPools} WHERE ${liquidityPools.id} = ${pool.id} AND ${liquidityPools.lowAlertEventId} = ${alert.id})`,
    ),
  ]);
  if (updated.length !== 1) {
    const reserved = (await ownPool(db, tenant.id, input.stablecoin))?.reserved ?? pool.reserved;
    throw validationError([`available: must be at least ${displayAmount(reserved)}, the amount reserved for loans being funded`]);
  }

  const retried = await retryFunding({ db, writer, clock: systemClock }, { tenantId: tenant.id, mode: "sandbox", maxPages: SANDBOX_LIQUIDITY_RETRY_PAGES });
  const [waiting] = await db
    .select({ n: sql<number>`count(*)` })
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, tenant.id),
        // Sandbox loans only: a sandbox key sees nothing of the tenant's live loans, not even their number.
        eq(loans.mode, "sandbox"),
        eq(loans.status, "CREATED"),
        eq(loans.decisionOutcome, "APPROVED"),
        eq(loans.fundingState, "AWAITING_LIQUIDITY"),
      ),
    );
  return { pool: (await ownPool(db, tenant.id, input.stablecoin))!, retried, stillWaiting: Number(waiting?.n ?? 0) };
}
