import { CHAINS } from "../domain/vocabularies.ts";
import { CHAIN_CONFIG } from "./chain-config.ts";

/**
 * Every chain as this deployment is configured (DECISIONS.md "Live wallets",
 * `GET /v1/chains`): what a merchant's integration needs to build or check a
 * transaction without asking us, in the order of the chain vocabulary.
 * `poolAddress` is null where no pool contract is deployed (TON and Solana
 * repay by transfer to `settlementWallet`; live EVM pools until deployed).
 */
export function listChains() {
  return CHAINS.map((chain) => {
    const c = CHAIN_CONFIG[chain];
    return {
      chain,
      family: c.family,
      chainId: c.chainId,
      live: !c.simulated,
      simulated: c.simulated,
      stablecoin: c.token.symbol,
      tokenAddress: c.token.address,
      decimals: c.token.decimals,
      poolAddress: c.pool,
      settlementWallet: c.settlementWallet,
    };
  });
}
