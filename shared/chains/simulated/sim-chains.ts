import type { Clock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import { SimChainEngine, type SimChainOps } from "./sim-chain-engine.ts";
import { memorySimStorage } from "./sim-storage.ts";

/**
 * Every simulated chain, one ledger each. Operations throw SimChainRejected
 * for requests no node would accept, whichever implementation runs them:
 * `durableSimulatedChains` (a Durable Object per chain, in the workers) or
 * `memorySimulatedChains` (in-process, for the Bun tier).
 *
 * @example
 * const amoy = chains.chain("POLYGON_AMOY");
 * await amoy.faucet({ address: borrower, amount: 50_000_000n });
 * const { transactions, head } = await amoy.readTransactions(0, 100);
 */
export interface SimulatedChains {
  /** The operations of one simulated chain; a live chain is a RangeError. */
  chain(chain: Chain): SimChainOps;
}

/** Throws unless `chain` is one this service simulates. */
export function assertSimulatedChain(chain: Chain): void {
  if (!CHAIN_CONFIG[chain]?.simulated) throw new RangeError(`${chain} is not a simulated chain`);
}

/** The simulated chains in memory, each an engine over its own memorySimStorage, created on first use. */
export function memorySimulatedChains(clock: Clock): SimulatedChains {
  const engines = new Map<Chain, SimChainEngine>();
  return {
    chain(chain) {
      assertSimulatedChain(chain);
      let engine = engines.get(chain);
      if (!engine) {
        engine = new SimChainEngine(chain, memorySimStorage(), clock);
        engines.set(chain, engine);
      }
      return engine;
    },
  };
}
