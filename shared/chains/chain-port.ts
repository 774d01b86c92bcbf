import type { Hex } from "viem";
import type { Chain, Stablecoin } from "../domain/rails.ts";

/**
 * The one port every chain adapter implements (simulated for the sandbox;
 * EVM and TON for live chains later). Chain failures are values, not throws
 * (`{ success: false, errorReason }`), so callers decide what a failure means.
 */
export interface ChainPort {
  /**
   * Sends `amount` of `asset` from the platform's pool to `to` (funding).
   * Idempotent by `reference`: the same reference never moves money twice
   * and answers with the first transfer's outcome.
   */
  transfer(input: TransferRequest): Promise<TransferResult>;
  /**
   * Transactions of `chain` in blocks after `afterBlock`, oldest first, at most
   * `limit`, with what the settlement listener needs to judge them; and the
   * chain's head block. The listener saves the last block it applied.
   */
  readTransactions(chain: Chain, afterBlock: number, limit: number, scope?: LedgerScope): Promise<{ transactions: ChainTransaction[]; head: number }>;
  /**
   * Optional, EVM: whether `signature` is `address`'s EIP-191 signature of
   * `message` as the chain judges it, so smart-contract wallets can sign:
   * ERC-1271 `isValidSignature` on a deployed wallet, ERC-6492 (the wallet's
   * factory call simulated first) on a counterfactual one, ecrecover on an
   * EOA. Only adapters that can call the chain offer it (the live EVM adapter,
   * through `evmContractSignatures`, which runs viem's `verifyMessage` and so
   * the deployless universal validator in one `eth_call`); the simulated
   * chain executes no contracts and has none. Throws only when the chain
   * cannot be asked (RPC down): a bad signature is `false`.
   */
  verifyContractSignature?(chain: Chain, input: ContractSignatureInput): Promise<boolean>;
  /**
   * Optional: `address`'s balances on `chain` in base units, the chain's
   * stablecoin (its token decimals, 6) and its native coin (wei on EVM,
   * nanoton on TON), for live wallets (DECISIONS.md "Live wallets"). Null
   * when this port cannot read that chain. Only adapters that read a live
   * chain offer it; until they exist (the next issue) no deployed port has
   * it and wallets show null balances. Throws only when the chain cannot be
   * asked (RPC down).
   */
  balances?(chain: Chain, address: string): Promise<WalletBalances | null>;
}

/** What `balances` reads: base units of the chain's stablecoin and of its native coin. */
export type WalletBalances = { stablecoin: bigint; native: bigint };

/**
 * Which ledger of a chain a call is about. A sandbox chain is simulated once
 * per tenant (DECISIONS.md "Modes": nothing one tenant does on it reaches
 * another tenant's or the platform's funds), so its calls name the tenant; a
 * live chain is one ledger for everyone and ignores it.
 */
export type LedgerScope = { sandboxTenantId?: string };

/** What `verifyContractSignature` judges: the signer's address, the signed text, the wallet's signature bytes. */
export type ContractSignatureInput = { address: string; message: string; signature: Hex };

/** The port's contract-signature capability alone, as the accept paths take it. */
export type ContractSignatureVerifier = Pick<ChainPort, "verifyContractSignature">;

export type TransferRequest = {
  chain: Chain;
  asset: Stablecoin;
  from: string;
  to: string;
  amount: bigint;
  reference: string;
  now: Date;
  /** Live chains: the tenant whose DISBURSEMENT wallet `from` is, whose installed signer signs. */
  tenantId?: string;
  /**
   * Live chains: answer only for a transfer already made for `reference`
   * (follow it as usual); never sign a new one. With none in flight the
   * answer is a failure (nothing moved). For a loan whose sender may no
   * longer fund (deleted, unverified, no gas) but whose transfer may be in
   * flight.
   */
  followOnly?: boolean;
  /**
   * Live chains: the number of the caller's reservation the transfer is
   * made under (`loans.funding_reservation`; each reservation of a loan
   * takes the next). After a failure answered for it the caller may release
   * the reservation and reserve again, from any wallet, even while a run of
   * the old reservation is still going (a loan object reset mid-run, two
   * objects owning the loan): no two transfers of the reference can land.
   * EVM, whose records are per sender, closes the reference to that
   * reservation and every earlier one in the sender's record before it
   * answers the failure (evm-sender-book.ts `close`). TON needs no number:
   * its one record per reference, whatever the sender (ton_transfers), is
   * claimed before anything is broadcast, and any later call, from any
   * wallet, follows the message claimed first.
   */
  reservation?: number;
} & LedgerScope;

/**
 * A transfer's outcome. `pending`: broadcast (or already broadcast for this
 * reference) but not yet as deep as the chain's confirmations require; the
 * money may still move, so the caller keeps its reservation and asks again
 * with the same reference later. A failure means nothing moved and nothing
 * will under this attempt.
 */
export type TransferResult =
  | {
      success: true;
      txHash: string;
      blockNumber: number;
      confirmedAt: Date;
      /**
       * The address the money went out from, where the adapter records it with the transfer (live TON): a
       * reference first sent from one wallet is followed, not sent again, when a later call names another
       * (its loan reserved again from another wallet meanwhile), so the sender asked for may not be the one
       * that paid. Absent: the `from` asked for.
       */
      from?: string;
    }
  | { success: "pending"; txHash: string; detail: string }
  | { success: false; errorReason: string; txHash: string | null };

/** An EVM log as the chain returns it (hex strings). */
export type EvmLog = { address: string; topics: string[]; data: string; logIndex: number };

/**
 * A transaction as the listener sees it. EVM: the receipt's status and logs
 * (only logs decide a repayment). TON and Solana: a token transfer with its
 * comment or memo.
 */
export type ChainTransaction =
  | {
      family: "EVM";
      chain: Chain;
      hash: string;
      blockNumber: number;
      /** Live chains: the block's hash, so the listener can tell when a reorg orphans the block (evm-listener.ts). */
      blockHash?: string;
      /** Unix seconds, as chains report block times. */
      timestamp: number;
      from: string;
      to: string | null;
      input: string;
      status: "success" | "reverted";
      logs: EvmLog[];
      /** Sandbox only: the tenant whose API call submitted it (attribution of unmatched payments). */
      sandboxTenantId?: string | null;
    }
  | {
      family: "TON" | "SOLANA";
      chain: Chain;
      hash: string;
      blockNumber: number;
      timestamp: number;
      from: string;
      to: string;
      /** Jetton master (TON) or token mint (Solana) of the transferred token. */
      token: string;
      amount: bigint;
      comment: string | null;
      status: "success" | "failed";
      sandboxTenantId?: string | null;
    };
