import type { Chain } from "../domain/rails.ts";
import type { ChainPort } from "./chain-port.ts";

/**
 * One chain port over many: every call goes to the port of its chain (the
 * simulated chains for sandbox chains, a live adapter per configured live
 * chain). A chain with no port answers as an unconfigured chain does: a
 * failed transfer, null balances, no contract signature, and a read that
 * throws.
 */
export function routedChainPort(ports: Partial<Record<Chain, ChainPort>>): ChainPort {
  const portOf = (chain: Chain) => ports[chain];
  return {
    async transfer(input) {
      const port = portOf(input.chain);
      if (!port) return { success: false, errorReason: `${input.chain} is not configured on this deployment`, txHash: null };
      return port.transfer(input);
    },
    async readTransactions(chain, afterBlock, limit, scope) {
      const port = portOf(chain);
      if (!port) throw new RangeError(`${chain} is not configured on this deployment`);
      return port.readTransactions(chain, afterBlock, limit, scope);
    },
    // A chain whose port executes no contracts (the simulated chains) has no contract wallets: no contract signature holds there.
    async verifyContractSignature(chain, input) {
      const port = portOf(chain);
      return port?.verifyContractSignature ? port.verifyContractSignature(chain, input) : false;
    },
    async balances(chain, address) {
      const port = portOf(chain);
      return port?.balances ? port.balances(chain, address) : null;
    },
  };
}
