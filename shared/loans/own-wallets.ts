import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { wallets } from "../../db/schema/wallets.ts";
import type { Chain } from "../domain/rails.ts";
import type { WalletRole } from "../domain/wallets.ts";

/**
 * The roles of the tenant's own wallets (not deleted) at `address` on
 * `chain`: one row per role the address holds. `address` is canonical for
 * the chain (shared/domain/addresses.ts: a TON friendly form is parsed to
 * raw), as wallets store theirs; the comparison ignores case all the same,
 * so an EVM address checksummed on one side and lowercase on the other is
 * one address. Wallets exist only on live chains: on a sandbox chain, none.
 * A shape for prepared reads too (values may be placeholders).
 */
export const ownWalletsQuery = (db: Db, input: { tenantId: string; chain: Chain; address: string }) =>
  db
    .select({ role: wallets.role })
    .from(wallets)
    .where(
      and(
        eq(wallets.tenantId, input.tenantId),
        eq(wallets.chain, input.chain),
        sql`lower(${wallets.address}) = lower(${input.address})`,
        isNull(wallets.deletedAt),
      ),
    );

/**
 * Why a loan must not pay `roles`, the tenant's own wallets at its borrower
 * address (`ownWalletsQuery`), or null when there are none: principal sent
 * to the lender's own disbursement or collections wallet lends nothing to
 * anyone, and a transfer into a COLLECTIONS wallet could pass for a
 * repayment.
 */
export function notTheTenantsOwn(chain: Chain, roles: readonly { role: WalletRole }[]): string | null {
  if (roles.length === 0) return null;
  const named = [...new Set(roles.map((r) => r.role))].sort().join(" and ");
  return `must be the borrower's own wallet, not this tenant's own ${named} wallet on ${chain}`;
}
