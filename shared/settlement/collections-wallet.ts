import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { wallets } from "../../db/schema/wallets.ts";
import type { TonRepaymentTarget } from "../chains/repayment-instructions.ts";
import type { Chain } from "../domain/rails.ts";

/** The tenant's verified COLLECTIONS wallet on `chain` (the first verified, when several are), or null. */
export async function collectionsWalletOf(db: Db, tenantId: string, chain: Chain): Promise<string | null> {
  const [row] = await db
    .select({ address: wallets.address })
    .from(wallets)
    .where(
      and(eq(wallets.tenantId, tenantId), eq(wallets.chain, chain), eq(wallets.role, "COLLECTIONS"), isNotNull(wallets.verifiedAt), isNull(wallets.deletedAt)),
    )
    .orderBy(asc(wallets.verifiedAt), asc(wallets.id))
    .limit(1);
  return row?.address ?? null;
}

/**
 * Where a loan's TON repayment goes: the tenant's verified COLLECTIONS wallet
 * on live TON (DECISIONS.md "Live wallets"); nothing to look up on other chains.
 */
export async function tonRepaymentTarget(db: Db, loan: Pick<LoanRow, "tenantId" | "chain">): Promise<TonRepaymentTarget> {
  return loan.chain === "TON" ? { collections: await collectionsWalletOf(db, loan.tenantId, "TON") } : {};
}
