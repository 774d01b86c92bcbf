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
  readTransactions(chain: Chain, afterBlock: number, limit: number): Promise<{ transactions: ChainTransaction[]; head: number }>;
}

export type TransferRequest = {
  chain: Chain;
  asset: Stablecoin;
  from: string;
  to: string;
  amount: bigint;
  reference: string;
  now: Date;
};

export type TransferResult =
  | { success: true; txHash: string; blockNumber: number; confirmedAt: Date }
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
