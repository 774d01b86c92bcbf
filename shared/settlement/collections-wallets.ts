import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import { getAddress } from "viem";
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

/** Every verified COLLECTIONS address on an EVM `chain`, all tenants, checksummed and distinct: what the log reader watches. */
export async function evmCollectionsAddresses(db: Db, chain: Chain): Promise<`0x${string}`[]> {
  const rows = await db.select({ address: wallets.address }).from(wallets).where(verifiedCollections(chain));
  return [...new Set(rows.map((r) => getAddress(r.address)))].sort();
}
