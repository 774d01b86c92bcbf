import type { Chain, Stablecoin } from "../domain/rails.ts";

/**
 * The one port every chain adapter implements (simulated for the sandbox;
 * EVM and TON for live chains later). Chain failures are values, not throws
 * (`{ success: false, errorReason }`), so callers decide what a failure means.
 */
export interface ChainPort {
  /**
   * Sends `amount` of `asset` from `from` to `to`. Idempotent by `reference`:
   * the same reference never moves money twice and answers with the first
   * transfer's outcome.
   */
  transfer(input: TransferRequest): Promise<TransferResult>;
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
