import { eq } from "drizzle-orm";
import { keccak256, toHex } from "viem";
import type { Db } from "../../../db/create-db.ts";
import { simChainTransactions } from "../../../db/schema/sim-chain-transactions.ts";
import { newId } from "../../domain/ids.ts";
import { isSandboxChain } from "../../domain/rails.ts";
import type { ChainPort, TransferRequest, TransferResult } from "../chain-port.ts";

/** The address the sandbox pool pays from on every simulated chain. */
export const SIMULATED_POOL_ADDRESS = "sandbox-pool";

/**
 * The sandbox chains: transfers confirm at once, each in its own block, and
 * are recorded in `sim_chain_transactions`. The transaction hash is derived
 * from the chain and the reference, so a retried send finds its first
 * transfer (the reference is unique) instead of sending again.
 */
export function simulatedChain(db: Db): ChainPort {
  return {
    async transfer(input: TransferRequest): Promise<TransferResult> {
      if (!isSandboxChain(input.chain)) {
        return { success: false, errorReason: `${input.chain} is not a simulated chain`, txHash: null };
      }
      const txHash = keccak256(toHex(`${input.chain}:${input.reference}`));
      await db
        .insert(simChainTransactions)
        .values({
          id: newId(),
          chain: input.chain,
          txHash,
          reference: input.reference,
          asset: input.asset,
          fromAddress: input.from,
          toAddress: input.to,
          amount: input.amount,
          status: "CONFIRMED",
          blockNumber: input.now.getTime(),
          createdAt: input.now,
        })
        .onConflictDoNothing({ target: simChainTransactions.reference });
      const [tx] = await db.select().from(simChainTransactions).where(eq(simChainTransactions.reference, input.reference)).limit(1);
      if (!tx) return { success: false, errorReason: "transfer was not recorded", txHash: null };
      if (tx.status !== "CONFIRMED") return { success: false, errorReason: "transfer failed", txHash: tx.txHash };
      return { success: true, txHash: tx.txHash, blockNumber: tx.blockNumber, confirmedAt: tx.createdAt };
    },
  };
}
