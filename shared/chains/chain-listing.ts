import { CHAINS } from "../domain/vocabularies.ts";

import { effectiveChainConfig, type LiveChain, type LiveChains } from "./live/live-config.ts";

/**
 * Every chain as this deployment is configured (DECISIONS.md "Live wallets",
 * `GET /v1/chains`): what a merchant's integration needs to build or check a
 * transaction without asking us, in the order of the chain vocabulary. Live
 * chains show the token and pool this deployment uses (the canonical token
 * unless configured otherwise, as the local rehearsal does on Anvil), whether
 * a node is configured for them, and the confirmations they need.
 * `poolAddress` is null where no pool contract is deployed (TON and Solana
 * repay by transfer; a live EVM chain until its pool is configured).
 */
export function listChains(live: LiveChains = {}) {
  return CHAINS.map((chain) => {
    const c = effectiveChainConfig(chain, live);
    const settings = live[chain as LiveChain];
    return {
      chain,
      family: c.family,
      chainId: c.chainId,
      live: !c.simulated,
      simulated: c.simulated,
      configured: c.simulated || settings !== undefined,
      confirmations: c.simulated ? 0 : (settings?.confirmations ?? null),
      stablecoin: c.token.symbol,
      tokenAddress: c.token.address,
      decimals: c.token.decimals,
      poolAddress: c.pool,
      settlementWallet: c.settlementWallet,
    };
  });
}
