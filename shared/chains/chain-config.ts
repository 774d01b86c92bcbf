import type { Chain, Stablecoin } from "../domain/rails.ts";

export type ChainFamily = "EVM" | "TON" | "SOLANA";

type TokenConfig = { address: string; symbol: Stablecoin; decimals: number; source: string };

export type ChainConfig = {
  chain: Chain;
  family: ChainFamily;
  simulated: boolean;
  /** EVM chain id. */
  chainId: number | null;
  token: TokenConfig;
  /** EVM: the SvcPool contract repayments go to (null where not deployed yet). */
  pool: string | null;
  /** TON and Solana: the platform settlement wallet repayments go to. */
  settlementWallet: string | null;
  /** The address principal is sent from (the pool contract on EVM, the settlement wallet elsewhere). */
  fundingSource: string | null;
  /**
   * Live chains: the native balance (wei, nanoton) a DISBURSEMENT wallet must
   * hold before a funding transfer is broadcast, a conservative bound on one
   * stablecoin transfer's fee at busy times (an ERC-20 transfer is ~65k gas;
   * a jetton transfer attaches ~0.05 TON). Below it the loan waits instead
   * of broadcasting a transaction its sender cannot pay for. Null on
   * simulated chains, which charge no gas.
   */
  minGasNative: bigint | null;
};

/** The deployment's own contracts on a live chain, as configured (live-config.ts): its stablecoin's token and its pool, null until deployed. */
export type DeployedContracts = { tokenAddress: string; poolAddress: string | null };

/**
 * Why `address` (canonical) on `chain` must not receive a loan's principal,
 * or null: the EVM zero address (what is sent there is burned), or one of the
 * service's own contracts or wallets there (the stablecoin's token contract,
 * the pool, the funding source, the settlement wallet), which no borrower
 * controls and from which nobody repays. On a live chain the deployment's
 * own token and pool (`deployed`, as configured: live-config.ts
 * `deployedContracts`) count as well as the canonical ones; live pools are
 * not in CHAIN_CONFIG at all.
 */
export function notAPayee(chain: Chain, address: string, deployed: DeployedContracts | null = null): string | null {
  if (/^0x0{40}$/i.test(address)) return "must not be the zero address: what is sent there is burned, and nobody can repay from it";
  const config = CHAIN_CONFIG[chain];
  const named: [string | null, string][] = [
    [config.token.address, `the ${config.token.symbol} token contract`],
    [config.pool, "the service's pool contract"],
    [config.fundingSource, "the service's funding source"],
    [config.settlementWallet, "the service's settlement wallet"],
    [deployed?.tokenAddress ?? null, `the ${config.token.symbol} token contract`],
    [deployed?.poolAddress ?? null, "the service's pool contract"],
  ];
  const hit = named.find(([a]) => a !== null && a.toLowerCase() === address.toLowerCase());
  return hit ? `must be the borrower's own wallet, not ${hit[1]} on ${chain}` : null;
}

/**
 * One table of chain facts. Token addresses are the canonical stablecoins
 * (sources noted); sandbox chains are simulated by this service, with the
 * canonical testnet token addresses and pool addresses of our own choosing.
 * Live pool contracts are filled in when deployed (until then live repay
 * answers that the chain is not enabled).
 */
export const CHAIN_CONFIG: Record<Chain, ChainConfig> = {
  POLYGON_AMOY: {
    chain: "POLYGON_AMOY",
    family: "EVM",
    simulated: true,
    chainId: 80002,
    token: {
      address: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
      symbol: "USDC",
      decimals: 6,
      source: "Circle, USDC on test networks (developers.circle.com/stablecoins/usdc-contract-addresses)",
    },
    pool: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
    settlementWallet: null,
    fundingSource: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
    minGasNative: null,
  },
  BASE_SEPOLIA: {
    chain: "BASE_SEPOLIA",
    family: "EVM",
    simulated: true,
    chainId: 84532,
    token: {
      address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      symbol: "USDC",
      decimals: 6,
      source: "Circle, USDC on test networks (developers.circle.com/stablecoins/usdc-contract-addresses)",
    },
    pool: "0x0165878A594ca255338adfa4d48449f69242Eb8F",
    settlementWallet: null,
    fundingSource: "0x0165878A594ca255338adfa4d48449f69242Eb8F",
    minGasNative: null,
  },
  POLYGON: {
    chain: "POLYGON",
    family: "EVM",
    simulated: false,
    chainId: 137,
    token: {
      address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      symbol: "USDC",
      decimals: 6,
      source: "Circle, native USDC on Polygon PoS (developers.circle.com/stablecoins/usdc-contract-addresses)",
    },
    pool: null,
    settlementWallet: null,
    fundingSource: null,
    // 0.1 POL: ~65k gas at 1,500 gwei
    minGasNative: 100_000_000_000_000_000n,
  },
  BASE: {
    chain: "BASE",
    family: "EVM",
    simulated: false,
    chainId: 8453,
    token: {
      address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      symbol: "USDC",
      decimals: 6,
      source: "Circle, native USDC on Base (developers.circle.com/stablecoins/usdc-contract-addresses)",
    },
    pool: null,
    settlementWallet: null,
    fundingSource: null,
    // 0.0005 ETH: ~65k gas at ~7.7 gwei, far above Base's usual fees
    minGasNative: 500_000_000_000_000n,
  },
  TON_TESTNET: {
    chain: "TON_TESTNET",
    family: "TON",
    simulated: true,
    chainId: null,
    token: {
      address: "0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe",
      symbol: "USDT",
      decimals: 6,
      source: "Tether USD₮ jetton master on TON (tether.to); simulated on TON_TESTNET",
    },
    pool: null,
    settlementWallet: "0:6b2d0a8c1b76c6b1b3f3d3f0d4f5f0e9a3c8e1f4b0a6d2c7e9f1a3b5c7d9e1f3",
    fundingSource: "0:6b2d0a8c1b76c6b1b3f3d3f0d4f5f0e9a3c8e1f4b0a6d2c7e9f1a3b5c7d9e1f3",
    minGasNative: null,
  },
  TON: {
    chain: "TON",
    family: "TON",
    simulated: false,
    chainId: null,
    token: {
      address: "0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe",
      symbol: "USDT",
      decimals: 6,
      source: "Tether USD₮ jetton master EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs (tether.to)",
    },
    pool: null,
    settlementWallet: null,
    fundingSource: null,
    // 0.1 TON: twice the ~0.05 TON a jetton transfer attaches
    minGasNative: 100_000_000n,
  },
  SOLANA_DEVNET: {
    chain: "SOLANA_DEVNET",
    family: "SOLANA",
    simulated: true,
    chainId: null,
    token: {
      address: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
      symbol: "USDC",
      decimals: 6,
      source: "Circle, USDC on Solana devnet (developers.circle.com/stablecoins/usdc-contract-addresses)",
    },
    pool: null,
    settlementWallet: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    fundingSource: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    minGasNative: null,
  },
};

export const chainConfig = (chain: Chain): ChainConfig => CHAIN_CONFIG[chain];

/**
 * The operator of the simulated pool contracts (`fund`, `collect`): an address
 * no key is known for, so no signed transaction can come from it. The engine
 * executes the pool's `fund` as this account itself. (It used to be Anvil's
 * account #1, whose private key is published: anyone could sign `collect`.)
 */
export const SIMULATED_OPERATOR = "0x00000000000000000000000000000000000f00D5";
