import { getAddress } from "viem";
import { type ChainConfig, CHAIN_CONFIG, type DeployedContracts } from "../chain-config.ts";
import type { Chain } from "../../domain/rails.ts";

export type LiveChain = Extract<Chain, "POLYGON" | "BASE" | "TON">;
export const LIVE_CHAINS: readonly LiveChain[] = ["POLYGON", "BASE", "TON"];

/**
 * One live chain as this deployment is configured: where its node answers,
 * which token and pool it uses (the canonical ones of chain-config.ts unless
 * configured otherwise, as the local rehearsal does on Anvil), and how deep a
 * transaction must be before it counts (funding and repayments alike).
 */
export type LiveChainSettings = {
  chain: LiveChain;
  /** EVM JSON-RPC URL, or the TON HTTP API (toncenter v2 `jsonRPC`) URL. */
  rpcUrl: string;
  /** TON HTTP API key, when the endpoint wants one. */
  apiKey: string | null;
  tokenAddress: string;
  /** EVM: the SvcPool contract; null until deployed (live repay then answers that the chain is not enabled). */
  poolAddress: string | null;
  /** Blocks on top of a transaction's block before it counts (EVM); TON counts masterchain-final transactions only. */
  confirmations: number;
  /** EVM: where the settlement listener starts on a chain it has no cursor for (the pool's deployment block); 0 reads from genesis. */
  startBlock: number;
};

/** Confirmations each chain needs before funding or a repayment counts (Polygon PoS reorgs run deeper than Base's). */
export const DEFAULT_CONFIRMATIONS: Record<LiveChain, number> = { POLYGON: 64, BASE: 10, TON: 1 };

/** The environment variables that configure live chains (all optional: an unconfigured chain is not enabled). */
export const LIVE_CHAIN_ENV_KEYS = [
  "POLYGON_RPC_URL",
  "POLYGON_TOKEN_ADDRESS",
  "POLYGON_POOL_ADDRESS",
  "POLYGON_CONFIRMATIONS",
  "BASE_RPC_URL",
  "BASE_TOKEN_ADDRESS",
  "BASE_POOL_ADDRESS",
  "BASE_CONFIRMATIONS",
  "POLYGON_REPLACE_AFTER_SECONDS",
  "BASE_REPLACE_AFTER_SECONDS",
  "POLYGON_START_BLOCK",
  "BASE_START_BLOCK",
  "TON_RPC_URL",
  "TON_API_KEY",
  "TON_TOKEN_ADDRESS",
  "TON_CONFIRMATIONS",
] as const;

export type LiveChainEnv = Partial<Record<(typeof LIVE_CHAIN_ENV_KEYS)[number], string>>;

const count = (raw: string | undefined, fallback: number): number => {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`confirmations and start blocks must be whole numbers ≥ 0, not ${raw}`);
  return n;
};

/** The live chains a deployment has a node for, each with its settings (absent: no node, nothing lent there). */
export type LiveChains = Partial<Record<LiveChain, LiveChainSettings>>;

/**
 * The live chains this deployment has a node for, from its environment. A
 * chain without an RPC URL is absent: it lends nothing and its wallets show
 * null balances.
 *
 * @example liveChainSettings({ POLYGON_RPC_URL: "http://127.0.0.1:8545", POLYGON_POOL_ADDRESS: "0x…" }).POLYGON?.confirmations // 64
 */
export function liveChainSettings(env: LiveChainEnv): LiveChains {
  const out: LiveChains = {};
  for (const chain of LIVE_CHAINS) {
    const rpcUrl = env[`${chain}_RPC_URL`];
    if (!rpcUrl) continue;
    const base = CHAIN_CONFIG[chain];
    // EVM addresses as checksummed everywhere they are shown (GET /v1/chains, instructions); a malformed one fails at startup.
    const evm = (address: string | null) => (address && chain !== "TON" ? getAddress(address) : address);
    out[chain] = {
      chain,
      rpcUrl,
      apiKey: chain === "TON" ? (env.TON_API_KEY ?? null) : null,
      tokenAddress: evm(env[`${chain}_TOKEN_ADDRESS`] || base.token.address)!,
      poolAddress: chain === "TON" ? null : evm(env[`${chain as "POLYGON" | "BASE"}_POOL_ADDRESS`] || base.pool),
      confirmations: count(env[`${chain}_CONFIRMATIONS`], DEFAULT_CONFIRMATIONS[chain]),
      startBlock: chain === "TON" ? 0 : count(env[`${chain as "POLYGON" | "BASE"}_START_BLOCK`], 0),
    };
  }
  return out;
}

/** A chain's facts with this deployment's live settings applied (token and pool addresses). */
export function effectiveChainConfig(chain: Chain, live: LiveChains): ChainConfig {
  const base = CHAIN_CONFIG[chain];
  const settings = live[chain as LiveChain];
  if (!settings) return base;
  return { ...base, token: { ...base.token, address: settings.tokenAddress }, pool: settings.poolAddress };
}

/**
 * The deployment's own token and pool on `chain` (`notAPayee` refuses them as a borrower's wallet), or null
 * on a sandbox chain or a live chain this deployment has not configured.
 *
 * @example deployedContracts(deps.liveChains, "POLYGON")?.poolAddress
 */
export function deployedContracts(liveChains: LiveChains | undefined, chain: Chain): DeployedContracts | null {
  const settings = (LIVE_CHAINS as readonly Chain[]).includes(chain) ? liveChains?.[chain as LiveChain] : undefined;
  return settings ? { tokenAddress: settings.tokenAddress, poolAddress: settings.poolAddress } : null;
}
