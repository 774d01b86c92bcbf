import { and, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { wallets } from "../../db/schema/wallets.ts";
import { RAILS } from "../domain/rails.ts";
import type { VerbDeps } from "../verbs.ts";
import { readBalances } from "../wallets/wallet-verbs.ts";
import type { LiveLiquidityReader } from "./go-live-facts.ts";

/**
 * Step 5's fact from the tenant's live wallets (DECISIONS.md "Go-live
 * certification"): the verified DISBURSEMENT wallet, on the live chain of
 * one of its active products' rails, with the largest stablecoin balance
 * read from the chain. Unverified wallets, wallets on a chain no product
 * lends on, and wallets whose balance cannot be read (the chain port has
 * no live adapter yet, or the RPC is down) do not count.
 */
export function liveLiquidityFromWallets(deps: Pick<VerbDeps, "db" | "chain">): LiveLiquidityReader {
  return async ({ tenantId }) => {
    const products = await deps.db
      .select({ network: loanProducts.network })
      .from(loanProducts)
      .where(and(eq(loanProducts.tenantId, tenantId), eq(loanProducts.status, "ACTIVE")));
    const chains = [...new Set(products.map((p) => RAILS[p.network].liveChain))];
    if (chains.length === 0) return null;
    const candidates = await deps.db
      .select()
      .from(wallets)
      .where(
        and(
          eq(wallets.tenantId, tenantId),
          eq(wallets.role, "DISBURSEMENT"),
          inArray(wallets.chain, chains),
          isNotNull(wallets.verifiedAt),
          isNull(wallets.deletedAt),
        ),
      );
    let best: { verifiedAt: Date; balance: bigint } | null = null;
    for (const wallet of candidates) {
      const balances = await readBalances(deps.chain, wallet);
      if (balances && (!best || balances.stablecoin > best.balance)) best = { verifiedAt: wallet.verifiedAt!, balance: balances.stablecoin };
    }
    return best;
  };
}
