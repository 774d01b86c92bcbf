import { and, asc, eq, gt, isNotNull, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { wallets } from "../../db/schema/wallets.ts";
import type { Chain } from "../domain/rails.ts";

// Where live repayments land (DECISIONS.md "Live wallets"): a tenant's
// COLLECTIONS wallets on a chain that proved control (verifiedAt) and are not
// deleted. An unverified wallet neither receives nor is credited; a deleted
// one is named in no new instructions, but the listener still reads it for
// LISTEN_AFTER_DELETE_DAYS: a borrower who fetched instructions before the
// delete and pays as they say is credited, not dropped.

/** How long the listener keeps reading a deleted COLLECTIONS wallet: the longest tenure and grace (15 + 30 days) and then some. */
export const LISTEN_AFTER_DELETE_DAYS = 90;

const verifiedCollectionsOn = (chain: Chain) => and(eq(wallets.chain, chain), eq(wallets.role, "COLLECTIONS"), isNotNull(wallets.verifiedAt));
const verifiedCollections = (chain: Chain) => and(verifiedCollectionsOn(chain), isNull(wallets.deletedAt));

/**
 * The COLLECTIONS wallets the listener reads on `chain` at `now` (the system
 * time): verified, not deleted or deleted less than LISTEN_AFTER_DELETE_DAYS
 * ago, of a tenant certified for live. (The sweep's liveJudgedAt writes the same condition out in SQL: change both.)
 */
export const listenedCollections = (chain: Chain, now: Date) =>
  and(
    verifiedCollectionsOn(chain),
    or(isNull(wallets.deletedAt), gt(wallets.deletedAt, new Date(now.getTime() - LISTEN_AFTER_DELETE_DAYS * 86_400_000))),
    // Certified tenants only: live repayment instructions exist only for them, and a free sandbox signup could
    // otherwise make the listener read wallets by the thousand (verify, delete, add again: a deleted wallet is read on).
    sql`EXISTS (SELECT 1 FROM ${tenants} WHERE ${tenants.id} = ${wallets.tenantId} AND ${tenants.certifiedAt} IS NOT NULL)`,
  );

/** The address live repayment instructions name: the tenant's oldest verified COLLECTIONS wallet on `chain` (a stable choice), or null. */
export async function collectionsWalletOf(db: Db, tenantId: string, chain: Chain): Promise<string | null> {
  const [row] = await db
    .select({ address: wallets.address })
    .from(wallets)
    .where(and(eq(wallets.tenantId, tenantId), verifiedCollections(chain)))
    .orderBy(asc(wallets.createdAt), asc(wallets.id))
    .limit(1);
  return row?.address ?? null;
}

/** Every COLLECTIONS address the listener reads on a chain (lowercase; `listenedCollections`), with the tenants that hold it: where the live listener credits. */
export async function collectionsOwners(db: Db, chain: Chain, now: Date): Promise<Map<string, string[]>> {
  const rows = await db.select({ address: wallets.address, tenantId: wallets.tenantId }).from(wallets).where(listenedCollections(chain, now));
  const owners = new Map<string, string[]>();
  for (const r of rows) {
    const key = r.address.toLowerCase();
    owners.set(key, [...new Set([...(owners.get(key) ?? []), r.tenantId])]);
  }
  return owners;
}
