import { CHAIN_CONFIG } from "../chain-config.ts";
import type { ChainPort, TransferResult } from "../chain-port.ts";
import { SimChainRejected } from "./sim-chain-rejected.ts";
import { assertSimulatedChain, type SimulatedChains } from "./sim-chains.ts";

const FUNDING_REFERENCE = /^funding:(.+)$/;

/**
 * The chain port over the simulated chains. Every call names the sandbox
 * tenant whose ledger it is about (`sandboxTenantId`): without it a transfer
 * fails and a read throws, never falling back to a shared ledger. `transfer`
 * is funding: the pool (EVM: SvcPool's `fund` from the operator; TON and
 * Solana: the settlement wallet) sends principal to the borrower, for the
 * loan named in the reference `funding:<loanId>`; `from` is ignored, the pool
 * is the only source. Failures are values, as the port wants.
 */
export function simulatedChainPort(chains: SimulatedChains): ChainPort {
  return {
    async transfer(input): Promise<TransferResult> {
      const config = CHAIN_CONFIG[input.chain];
      if (!config?.simulated) return { success: false, errorReason: `${input.chain} is not a simulated chain`, txHash: null };
      if (input.asset !== config.token.symbol) {
        return { success: false, errorReason: `${input.chain} carries ${config.token.symbol}, not ${input.asset}`, txHash: null };
      }
      const loanId = FUNDING_REFERENCE.exec(input.reference)?.[1];
      if (!loanId) return { success: false, errorReason: `reference must be funding:<loanId>, not ${input.reference}`, txHash: null };
      if (!input.sandboxTenantId)
        return { success: false, errorReason: `a transfer on ${input.chain} names the sandbox tenant whose ledger it is on`, txHash: null };
      try {
        const sent = await chains
          .chain(input.chain, input.sandboxTenantId)
          // Stamped with the funding's time on the loan's clock (the tenant's sandbox clock), as every service write to a ledger is.
          .fundFromPool({ loanId, to: input.to, amount: input.amount, reference: input.reference, at: input.now });
        if (sent.status !== "success") {
          return { success: false, errorReason: sent.failureReason ?? `the funding transaction ${sent.status}`, txHash: sent.txHash };
        }
        return { success: true, txHash: sent.txHash, blockNumber: sent.blockNumber, confirmedAt: new Date(sent.timestamp * 1000) };
      } catch (error) {
        if (error instanceof SimChainRejected) return { success: false, errorReason: error.message, txHash: null };
        throw error;
      }
    },
    readTransactions: (chain, afterBlock, limit, scope) => {
      assertSimulatedChain(chain);
      if (!scope?.sandboxTenantId) throw new RangeError(`reading ${chain} names the sandbox tenant whose ledger it is`);
      return chains.chain(chain, scope.sandboxTenantId).readTransactions(afterBlock, limit);
    },
  };
}
