/**
 * Networks, stablecoins and chains (SPEC.md "Chains", DECISIONS.md "Chains").
 * A rail is a supported network/stablecoin pair; each rail lends on one
 * sandbox chain and one live chain.
 */
import { CHAINS, NETWORKS, STABLECOINS, TENANT_MODES } from "./vocabularies.ts";

export { CHAINS, NETWORKS, STABLECOINS, TENANT_MODES };
export type Network = (typeof NETWORKS)[number];

export type Stablecoin = (typeof STABLECOINS)[number];

export type Chain = (typeof CHAINS)[number];

export type TenantMode = (typeof TENANT_MODES)[number];

type RailDef = { stablecoin: Stablecoin; sandboxChain: Chain; liveChain: Chain };

export const RAILS: Record<Network, RailDef> = {
  TON: { stablecoin: "USDT", sandboxChain: "TON_TESTNET", liveChain: "TON" },
  POLYGON: { stablecoin: "USDC", sandboxChain: "POLYGON_AMOY", liveChain: "POLYGON" },
  BASE: { stablecoin: "USDC", sandboxChain: "BASE_SEPOLIA", liveChain: "BASE" },
};

export const SANDBOX_CHAINS: readonly Chain[] = ["POLYGON_AMOY", "BASE_SEPOLIA", "SOLANA_DEVNET", "TON_TESTNET"];

export const isSandboxChain = (chain: Chain): boolean => SANDBOX_CHAINS.includes(chain);

/** The mode of what happens on a chain (DECISIONS.md "Modes"): a sandbox chain is sandbox, every other chain live. */
export const modeOfChain = (chain: Chain): TenantMode => (isSandboxChain(chain) ? "sandbox" : "live");

/** True when the pair is one of the supported rails (TON/USDT, POLYGON/USDC, BASE/USDC). */
export const isSupportedRail = (network: Network, stablecoin: Stablecoin): boolean => RAILS[network].stablecoin === stablecoin;

/** The chain a rail lends on for a tenant in the given mode. */
export const chainForRail = (network: Network, mode: TenantMode): Chain => (mode === "live" ? RAILS[network].liveChain : RAILS[network].sandboxChain);
