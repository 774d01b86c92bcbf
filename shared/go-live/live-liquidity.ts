import { and, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loanProducts } from "../../db/schema/loan-products.ts";
import { wallets } from "../../db/schema/wallets.ts";
import { type Chain, RAILS } from "../domain/rails.ts";
import type { VerbDeps } from "../verbs.ts";
import { readBalances } from "../wallets/wallet-verbs.ts";
import type { LiveLiquidityReader } from "./go-live-facts.ts";

/**
 * Step 5's fact from the tenant's live wallets (DECISIONS.md "Go-live
 * certification"): a verified DISBURSEMENT wallet on the live chain of one
 * of its active products' rails, with its stablecoin balance read from the
 * chain, minus the principal its live pool holds reserved for live loans in
 * flight (as live funding counts headroom), against the smallest minimum
 * ticket of the active products **on that wallet's chain** (a wallet funds
 * only its own chain's loans: a BASE wallet holding 20.00 does not cover a
 * BASE product whose minimum is 500.00 because a POLYGON product's minimum is
 * 10.00). Of the wallets, one that covers its chain's minimum (the largest
 * balance among them), else the largest balance. Unverified wallets, wallets
 * on a chain no product lends on, and wallets whose balance cannot be read
 * (the chain port has no live adapter yet, or the RPC is down) do not count.
 */
export function liveLiquidityFromWallets(deps: Pick<VerbDeps, "db" | "chain">): LiveLiquidityReader {
  return async ({ tenantId }) => {
    const products = await deps.db
      .select({ network: loanProducts.network, minTicket: loanProducts.minTicket })
      .from(loanProducts)
      .where(and(eq(loanProducts.tenantId, tenantId), eq(loanProducts.status, "ACTIVE")));
    const minOn = new Map<Chain, bigint>();
    for (const p of products) {
      const chain = RAILS[p.network].liveChain;
      const least = minOn.get(chain);
      if (least === undefined || p.minTicket < least) minOn.set(chain, p.minTicket);
    }
    const chains = [...minOn.keys()];
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
    let best: { verifiedAt: Date; balance: bigint; minPrincipal: bigint; walletId: string } | null = null;
    const covers = (w: { balance: bigint; minPrincipal: bigint }) => w.balance >= w.minPrincipal;
    for (const wallet of candidates) {
      const balances = await readBalances(deps.chain, wallet);
      if (!balances) continue;
      const found = {
        walletId: wallet.id,
        verifiedAt: wallet.verifiedAt!,
        balance: balances.stablecoin - (reservedOn.get(wallet.chain) ?? 0n),
        minPrincipal: minOn.get(wallet.chain)!,
      };
      if (!best || (covers(found) && !covers(best)) || (covers(found) === covers(best) && found.balance > best.balance)) best = found;
    }
    return best;
  };
}
