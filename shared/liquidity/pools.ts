import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import type { Stablecoin } from "../domain/rails.ts";

export type PoolRow = typeof liquidityPools.$inferSelect;

/**
 * The pool a tenant's loans in `stablecoin` draw from: the tenant's own, else
 * a shared pool (tenant null) of the tenant's mode.
 */
export async function poolFor(db: Db, tenant: { id: string; mode: "sandbox" | "live" }, stablecoin: Stablecoin): Promise<PoolRow | null> {
  const [own] = await db
    .select()
    .from(liquidityPools)
    .where(and(eq(liquidityPools.tenantId, tenant.id), eq(liquidityPools.stablecoin, stablecoin)))
    .orderBy(asc(liquidityPools.createdAt))
    .limit(1);
  if (own) return own;
  const [shared] = await db
    .select()
    .from(liquidityPools)
    .where(and(isNull(liquidityPools.tenantId), eq(liquidityPools.mode, tenant.mode), eq(liquidityPools.stablecoin, stablecoin)))
    .orderBy(asc(liquidityPools.createdAt))
    .limit(1);
  return shared ?? null;
}

/** SQL: the pool has at least `amount` of headroom (available − reserved). */
export const hasHeadroom = (poolId: string, amount: bigint) =>
  sql`EXISTS (SELECT 1 FROM ${liquidityPools} WHERE ${liquidityPools.id} = ${poolId} AND ${liquidityPools.available} - ${liquidityPools.reserved} >= ${Number(amount)})`;

export const headroomOf = (pool: PoolRow): bigint => pool.available - pool.reserved;
