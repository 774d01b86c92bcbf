import type { Chain } from "../../domain/rails.ts";
import type { SimChainOps } from "./sim-chain-engine.ts";
import { fromRpcResult, type SimRpcResult } from "./sim-chain-rejected.ts";
import { assertSimulatedChain, ledgerName, type SimulatedChains } from "./sim-chains.ts";
import type { SimLedger, SimulatedChainObject } from "./simulated-chain-object.ts";

/**
 * The simulated chains over the SimulatedChainObject namespace: the object
 * named `<tenantId>:<chain>` is that tenant's ledger of the chain and its
 * single writer, so no tenant's call can reach another's balances, nonces or
 * blocks. Kept apart from the class so that importing it pulls in no
 * `cloudflare:workers`.
 */
export function durableSimulatedChains(namespace: DurableObjectNamespace<SimulatedChainObject>): SimulatedChains {
  return {
    chain(chain: Chain, sandboxTenantId: string): SimChainOps {
      assertSimulatedChain(chain);
      const name = ledgerName(chain, sandboxTenantId);
      const ledger: SimLedger = { chain, name };
      const stub = () => namespace.get(namespace.idFromName(name));
      // RPC wraps return types; the object returns SimRpcResult values of these shapes.
      const call = async <T>(result: Promise<unknown>): Promise<T> => fromRpcResult((await result) as SimRpcResult<T>);
      return {
        faucet: (input) => call(stub().faucet(ledger, input)),
        submitEvmTransaction: (input) => call(stub().submitEvmTransaction(ledger, input)),
        transferToken: (input) => call(stub().transferToken(ledger, input)),
        emitLogAs: (input) => call(stub().emitLogAs(ledger, input)),
        fundFromPool: (input) => call(stub().fundFromPool(ledger, input)),
        readTransactions: (afterBlock, limit) => call(stub().readTransactions(ledger, afterBlock, limit)),
        head: () => call(stub().head(ledger)),
        getTransaction: (hash) => call(stub().getTransaction(ledger, hash)),
        balanceOf: (address, token) => call(stub().balanceOf(ledger, address, token)),
        allowance: (owner, spender) => call(stub().allowance(ledger, owner, spender)),
        nonceOf: (address) => call(stub().nonceOf(ledger, address)),
      };
    },
  };
}
