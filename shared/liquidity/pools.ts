import { and, asc, eq, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import type { Stablecoin, TenantMode } from "../domain/rails.ts";

export type PoolRow = typeof liquidityPools.$inferSelect;

/**
 * The pool a tenant's loans of one mode in `stablecoin` draw from: the
 * tenant's own of that mode, else a shared pool (tenant null) of that mode.
 * `mode` is the loan's (DECISIONS.md "Modes"), never the tenant's: a live
 * loan never draws on a sandbox pool, and a certified tenant's sandbox loans
 * keep drawing on their sandbox pool.
 */
export async function poolFor(db: Db, scope: { tenantId: string; mode: TenantMode }, stablecoin: Stablecoin): Promise<PoolRow | null> {
  return (await poolQuery(db, scope, stablecoin))[0] ?? null;
}

/**
 * The select of `poolFor`, for a batch: the pools of the mode and
 * stablecoin that are the tenant's or shared, the tenant's own first, each
 * kind oldest first; its first row is the pool.
 */
export const poolQuery = (db: Db, scope: { tenantId: string; mode: TenantMode }, stablecoin: Stablecoin) =>
  db
    .select()
    .from(liquidityPools)
    .where(
      and(
        or(eq(liquidityPools.tenantId, scope.tenantId), isNull(liquidityPools.tenantId)),
        eq(liquidityPools.mode, scope.mode),
        eq(liquidityPools.stablecoin, stablecoin),
      ),
    )
    .orderBy(sql`${liquidityPools.tenantId} IS NULL`, asc(liquidityPools.createdAt))
    .limit(1);

/** SQL: the pool has at least `amount` of headroom (available − reserved). */
export const hasHeadroom = (poolId: string, amount: bigint) =>
  sql`EXISTS (SELECT 1 FROM ${liquidityPools} WHERE ${liquidityPools.id} = ${poolId} AND ${liquidityPools.available} - ${liquidityPools.reserved} >= ${Number(amount)})`;

export const headroomOf = (pool: PoolRow): bigint => pool.available - pool.reserved;
