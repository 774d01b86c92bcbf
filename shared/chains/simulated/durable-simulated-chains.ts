import type { Chain } from "../../domain/rails.ts";
import type { SimChainOps } from "./sim-chain-engine.ts";
import { fromRpcResult, type SimRpcResult } from "./sim-chain-rejected.ts";
import { assertSimulatedChain, type SimulatedChains } from "./sim-chains.ts";
import type { SimulatedChainObject } from "./simulated-chain-object.ts";

/**
 * The simulated chains over the SimulatedChainObject namespace: the object
 * named after the chain is that chain's single writer. Kept apart from the
 * class so that importing it pulls in no `cloudflare:workers`.
 */
export function durableSimulatedChains(namespace: DurableObjectNamespace<SimulatedChainObject>): SimulatedChains {
  return {
    chain(chain: Chain): SimChainOps {
      assertSimulatedChain(chain);
      const stub = () => namespace.get(namespace.idFromName(chain));
      // RPC wraps return types; the object returns SimRpcResult values of these shapes.
      const call = async <T>(result: Promise<unknown>): Promise<T> => fromRpcResult((await result) as SimRpcResult<T>);
      return {
        faucet: (input) => call(stub().faucet(chain, input)),
        submitEvmTransaction: (input) => call(stub().submitEvmTransaction(chain, input)),
        transferToken: (input) => call(stub().transferToken(chain, input)),
        emitLogAs: (input) => call(stub().emitLogAs(chain, input)),
        fundFromPool: (input) => call(stub().fundFromPool(chain, input)),
        readTransactions: (afterBlock, limit) => call(stub().readTransactions(chain, afterBlock, limit)),
        head: () => call(stub().head(chain)),
        getTransaction: (hash) => call(stub().getTransaction(chain, hash)),
        balanceOf: (address, token) => call(stub().balanceOf(chain, address, token)),
        allowance: (owner, spender) => call(stub().allowance(chain, owner, spender)),
        nonceOf: (address) => call(stub().nonceOf(chain, address)),
      };
    },
  };
}
