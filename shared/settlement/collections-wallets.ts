import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { wallets } from "../../db/schema/wallets.ts";
import type { Chain } from "../domain/rails.ts";

// Where live repayments land (DECISIONS.md "Live wallets"): a tenant's
// COLLECTIONS wallets on a chain that proved control (verifiedAt) and are not
// deleted. An unverified or deleted wallet neither receives nor is credited.

const verifiedCollections = (chain: Chain) =>
  and(eq(wallets.chain, chain), eq(wallets.role, "COLLECTIONS"), isNotNull(wallets.verifiedAt), isNull(wallets.deletedAt));

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

/** Every verified COLLECTIONS address of a chain (lowercase), with the tenants that hold it: where the live listener credits. */
export async function collectionsOwners(db: Db, chain: Chain): Promise<Map<string, string[]>> {
  const rows = await db.select({ address: wallets.address, tenantId: wallets.tenantId }).from(wallets).where(verifiedCollections(chain));
  const owners = new Map<string, string[]>();
  for (const r of rows) {
    const key = r.address.toLowerCase();
    owners.set(key, [...new Set([...(owners.get(key) ?? []), r.tenantId])]);
  }
  return owners;
}
