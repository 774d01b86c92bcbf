import { and, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
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
 * read from the chain, minus the principal its live pool holds reserved for
 * live loans in flight (as live funding counts headroom). Unverified wallets, wallets on a chain no product
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
    const pools = await deps.db
      .select({ chain: liquidityPools.chain, reserved: liquidityPools.reserved })
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, tenantId), eq(liquidityPools.mode, "live"), inArray(liquidityPools.chain, chains)));
    const reservedOn = new Map(pools.map((p) => [p.chain, p.reserved]));
    let best: { verifiedAt: Date; balance: bigint } | null = null;
    for (const wallet of candidates) {
      const balances = await readBalances(deps.chain, wallet);
      if (!balances) continue;
      const balance = balances.stablecoin - (reservedOn.get(wallet.chain) ?? 0n);
      if (!best || balance > best.balance) best = { verifiedAt: wallet.verifiedAt!, balance };
    }
    return best;
  };
}
