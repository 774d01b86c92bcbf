/**
 * What a borrower needs to repay a loan from their own wallet, per chain
 * (SPEC.md "Repayment instructions (TON shape)", endpoint rules 5–6;
 * DECISIONS.md "Repayment"). Pure: the caller supplies the total due at this
 * moment, so the amount tracks late fees when the instructions are re-fetched.
 *
 * - EVM: two unsigned transactions, the stablecoin `approve(pool, amount)` then
 *   the pool's `repay(loanId, collections, amount)`, each signable as is by the
 *   borrower's wallet. The pool moves the stablecoin straight from the payer to
 *   `collections` (DECISIONS.md "Live wallets"): the pool itself on a sandbox
 *   chain (the simulated pool collects), the tenant's verified COLLECTIONS
 *   wallet on a live chain.
 * - TON: a plain USDT jetton transfer carrying the comment `svc:repay:<loanId>`,
 *   with a `ton://transfer/…` deep link, to the tenant's verified COLLECTIONS
 *   wallet on live TON, to the settlement wallet on TON_TESTNET.
 * - SOLANA_DEVNET: an SPL USDC transfer to the settlement wallet with the same
 *   text as its memo, with a Solana Pay link.
 */
import { Address } from "@ton/core";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { displayAmount, formatAmount } from "../domain/money.ts";
import type { Chain, Stablecoin } from "../domain/rails.ts";
import { CHAIN_CONFIG, type ChainConfig } from "./chain-config.ts";
import { SVC_POOL_ABI } from "./evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "./loan-id.ts";

type Hex = `0x${string}`;

export type EvmChain = Extract<Chain, "POLYGON_AMOY" | "BASE_SEPOLIA" | "POLYGON" | "BASE">;
export type TonChain = Extract<Chain, "TON_TESTNET" | "TON">;
export type SolanaChain = Extract<Chain, "SOLANA_DEVNET">;

/** One unsigned EVM call; with `chainId`, nonce, gas and fees added it is a complete transaction. */
export type EvmTransactionRequest = {
  to: Hex;
  data: Hex;
  /** Wei, as a decimal string: always "0" (the stablecoin moves by calldata, not value). */
  value: "0";
  description: string;
};

export type EvmRepaymentInstructions = {
  chain: EvmChain;
  supported: true;
  chainId: number;
  token: { address: Hex; symbol: Stablecoin; decimals: number };
  /** The pool contract: the `approve` spender and the `repay` target. */
  spender: Hex;
  /** Where the pool's `repay` moves the stablecoin: the tenant's COLLECTIONS wallet (live), the pool itself (sandbox). */
  collections: Hex;
  /** Total due, 2 decimals (6 when it is not whole cents). */
  amount: string;
  /** Total due in token base units. */
  amountUnits: string;
  /** The loan id as the pool contract sees it (see loan-id.ts). */
  loanIdBytes32: Hex;
  /** In order: first the approval, then the repay call. */
  transactions: [approve: EvmTransactionRequest, repay: EvmTransactionRequest];
};

/** Exactly the fields of SPEC.md "Repayment instructions (TON shape)". */
export type TonRepaymentInstructions = {
  chain: TonChain;
  supported: true;
  /** Where to send: the tenant's COLLECTIONS wallet on TON, the simulated settlement wallet on TON_TESTNET; user-friendly non-bounceable (UQ…, 0Q… on TON_TESTNET). */
  to: string;
  asset: "USDT";
  /** Total due with exactly 6 decimals. */
  amount: string;
  amountUnits: string;
  /** `svc:repay:<loanId>`, to be sent exactly as is. */
  comment: string;
  /** The USDT jetton master, user-friendly bounceable (EQ…, kQ… on TON_TESTNET). */
  jettonMaster: string;
  links: { ton: string; tonkeeper: string };
};

export type SolanaRepaymentInstructions = {
  chain: SolanaChain;
  supported: true;
  /** The platform settlement wallet (base58). */
  to: string;
  asset: "USDC";
  /** The USDC mint (base58). */
  mint: string;
  amount: string;
  amountUnits: string;
  /** `svc:repay:<loanId>`, the SPL memo. */
  memo: string;
  /** `solana` is a Solana Pay transfer request URL. */
  links: { solana: string };
};

export type RepaymentInstructions = EvmRepaymentInstructions | TonRepaymentInstructions | SolanaRepaymentInstructions;

/** A chain the service cannot take repayments on yet (a live chain without its pool or settlement wallet). */
export type UnsupportedRepayment = { supported: false; chain: Chain; reason: string };

const COMMENT_PREFIX = "svc:repay:";
const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REPAYMENT_COMMENT = /^svc:repay:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * The transfer comment (TON) or memo (Solana) that ties a payment to a loan.
 * Throws on anything but a lowercase UUID, so every comment we hand out is one
 * `parseRepaymentComment` accepts.
 *
 * @example repaymentComment("5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b") // "svc:repay:5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b"
 */
export function repaymentComment(loanId: string): string {
  if (!LOWERCASE_UUID.test(loanId)) throw new RangeError(`not a loan id: ${loanId}`);
  return `${COMMENT_PREFIX}${loanId}`;
}

/**
 * The loan id in a repayment comment, or null. SPEC.md rule 6 says "exactly":
 * no trimming, no case folding, nothing before or after, so a payment is
 * either unambiguously ours or recorded as unmatched for a person to attribute.
 *
 * @example parseRepaymentComment("svc:repay:5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b") // "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b"
 * @example parseRepaymentComment(" svc:repay:5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b") // null
 */
export function parseRepaymentComment(comment: string | null): string | null {
  if (comment === null) return null;
  return REPAYMENT_COMMENT.exec(comment)?.[1] ?? null;
}

/**
 * The repayment instructions for `loanId` on `chain` for `totalDue` base units.
 * Throws a RangeError when `totalDue` is not positive or `loanId` is not a
 * lowercase UUID (the caller's bug, never the borrower's).
 *
 * EVM live chains take the deployment's `config` (effectiveChainConfig: its
 * token and pool) and the tenant's verified COLLECTIONS wallet as
 * `collections`; without one the chain answers unsupported with the reason.
 *
 * @example repaymentInstructions({ loanId, chain: "TON_TESTNET", totalDue: 102_000_000n })
 * // { chain: "TON_TESTNET", supported: true, to: "0Q…", asset: "USDT", amount: "102.000000", amountUnits: "102000000", comment: "svc:repay:<loanId>", jettonMaster: "kQ…", links: { ton: "ton://transfer/0Q…?jetton=kQ…&amount=102000000&text=svc%3Arepay%3A…", tonkeeper: "https://app.tonkeeper.com/transfer/…" } }
 */
export function repaymentInstructions(input: RepaymentInstructionsInput): RepaymentInstructions | UnsupportedRepayment {
  const { loanId, chain, totalDue } = input;
  if (totalDue <= 0n) throw new RangeError(`total due must be positive, got ${totalDue}`);
  const comment = repaymentComment(loanId);
  const config = CHAIN_CONFIG[chain];
  switch (chain) {
    case "POLYGON_AMOY":
    case "BASE_SEPOLIA":
    case "POLYGON":
    case "BASE":
      return evmInstructions(chain, input.config ?? config, loanId, totalDue, input.collections ?? null);
    case "TON_TESTNET":
    case "TON":
      return tonInstructions(chain, input.config ?? config, comment, totalDue, input.collections ?? null);
    case "SOLANA_DEVNET":
      return solanaInstructions(chain, config, comment, totalDue);
    default: {
      const unknown: never = chain;
      throw new RangeError(`unknown chain ${String(unknown)}`);
    }
  }
}

export type RepaymentInstructionsInput = {
  loanId: string;
  chain: Chain;
  totalDue: bigint;
  /** The chain as this deployment configures it (effectiveChainConfig); the canonical CHAIN_CONFIG entry when absent. */
  config?: ChainConfig;
  /** Live chains (EVM and TON): the tenant's verified COLLECTIONS wallet on the chain, or null when it has none. */
  collections?: string | null;
};

const unsupported = (chain: Chain, reason: string): UnsupportedRepayment => ({ supported: false, chain, reason });

/** Whole cents as "102.00" (DECISIONS.md "Conventions"); a total with sub-cent units keeps all 6 rather than round. */

function evmInstructions(
  chain: EvmChain,
  config: ChainConfig,
  loanId: string,
  totalDue: bigint,
  collectionsWallet: string | null,
): EvmRepaymentInstructions | UnsupportedRepayment {
  if (!config.pool || config.chainId === null) {
    return unsupported(chain, `repayments on ${chain} are not enabled yet: no pool contract is deployed`);
  }
  const token = getAddress(config.token.address);
  const pool = getAddress(config.pool);
  // Sandbox: the simulated pool collects (and its operator sweeps). Live: only the tenant's own
  // verified COLLECTIONS wallet; the platform never holds a repayment.
  if (!config.simulated && !collectionsWallet) {
    return unsupported(
      chain,
      `repayments on ${chain} need the lender's verified COLLECTIONS wallet on ${chain}, and it has none yet (POST /v1/wallets, then verify it)`,
    );
  }
  const collections = config.simulated ? pool : getAddress(collectionsWallet!);
  const loanIdBytes32 = loanIdToBytes32(loanId);
  const amount = displayAmount(totalDue);
  const symbol = config.token.symbol;
  return {
    chain,
    supported: true,
    chainId: config.chainId,
    token: { address: token, symbol, decimals: config.token.decimals },
    spender: pool,
    collections,
    amount,
    amountUnits: totalDue.toString(),
    loanIdBytes32,
    transactions: [
      {
        to: token,
        data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [pool, totalDue] }),
        value: "0",
        description: `Allow the svc pool ${pool} to take ${amount} ${symbol} for this repayment`,
      },
      {
        to: pool,
        data: encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdBytes32, collections, totalDue] }),
        value: "0",
        description: `Repay ${amount} ${symbol} for loan ${loanId}, paid straight to ${collections}`,
      },
    ],
  };
}

/**
 * Where a live TON repayment goes (DECISIONS.md "Live wallets"): the tenant's
 * verified COLLECTIONS wallet, never an address the platform controls, and the
 * USDT jetton master this deployment is configured with. TON_TESTNET (the
 * simulated chain) keeps its settlement wallet.
 */
function tonInstructions(
  chain: TonChain,
  config: ChainConfig,
  comment: string,
  totalDue: bigint,
  collections: string | null,
): TonRepaymentInstructions | UnsupportedRepayment {
  const wallet = chain === "TON" ? collections : config.settlementWallet;
  if (!wallet) {
    return unsupported(
      chain,
      chain === "TON"
        ? "repayments on TON go to the tenant's COLLECTIONS wallet: none is verified on TON yet (add one with POST /v1/wallets and verify it)"
        : `repayments on ${chain} are not enabled yet: no settlement wallet is configured`,
    );
  }
  // The testnet flag makes wallets refuse a testnet address on mainnet and vice versa.
  const testOnly = chain === "TON_TESTNET";
  // Non-bounceable (UQ…) is how wallet apps show a wallet address and what they
  // expect in a transfer link; the jetton master is a contract, so bounceable (EQ…).
  const to = Address.parse(wallet).toString({ urlSafe: true, bounceable: false, testOnly });
  // The deployment's jetton master (effectiveChainConfig), the canonical USDT unless configured otherwise.
  const jettonMaster = Address.parse(config.token.address).toString({ urlSafe: true, bounceable: true, testOnly });
  const amountUnits = totalDue.toString();
  // ton:// transfer links carry jetton amounts in base units (Tonkeeper/TON Connect convention).
  const query = `jetton=${jettonMaster}&amount=${amountUnits}&text=${encodeURIComponent(comment)}`;
  return {
    chain,
    supported: true,
    to,
    asset: "USDT",
    amount: formatAmount(totalDue, 6),
    amountUnits,
    comment,
    jettonMaster,
    links: {
      ton: `ton://transfer/${to}?${query}`,
      tonkeeper: `https://app.tonkeeper.com/transfer/${to}?${query}`,
    },
  };
}

function solanaInstructions(chain: SolanaChain, config: ChainConfig, memo: string, totalDue: bigint): SolanaRepaymentInstructions | UnsupportedRepayment {
  if (!config.settlementWallet) {
    return unsupported(chain, `repayments on ${chain} are not enabled yet: no settlement wallet is configured`);
  }
  const amount = displayAmount(totalDue);
  const to = config.settlementWallet;
  const mint = config.token.address;
  // Solana Pay transfer request: amount in whole tokens as a decimal, memo URL-encoded.
  const solana = `solana:${to}?amount=${amount}&spl-token=${mint}&memo=${encodeURIComponent(memo)}`;
  return { chain, supported: true, to, asset: "USDC", mint, amount, amountUnits: totalDue.toString(), memo, links: { solana } };
}
