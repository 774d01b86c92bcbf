import type { Clock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import { SimChainEngine, type SimChainOps } from "./sim-chain-engine.ts";
import { memorySimStorage } from "./sim-storage.ts";

/**
 * Every simulated chain, one ledger per sandbox tenant and chain (DECISIONS.md
 * "Modes": what one tenant does on a simulated chain never moves another
 * tenant's or the platform's funds). Operations throw SimChainRejected for
 * requests no node would accept, whichever implementation runs them:
 * `durableSimulatedChains` (a Durable Object per tenant and chain, in the
 * workers) or `memorySimulatedChains` (in-process, for the Bun tier).
 *
 * @example
 * const amoy = chains.chain("POLYGON_AMOY", tenantId);
 * await amoy.faucet({ address: borrower, amount: 50_000_000n });
 * const { transactions, head } = await amoy.readTransactions(0, 100);
 */
export interface SimulatedChains {
  /** The operations of `sandboxTenantId`'s ledger of one simulated chain; a live chain is a RangeError. */
  chain(chain: Chain, sandboxTenantId: string): SimChainOps;
}

/** Throws unless `chain` is one this service simulates. */
export function assertSimulatedChain(chain: Chain): void {
  if (!CHAIN_CONFIG[chain]?.simulated) throw new RangeError(`${chain} is not a simulated chain`);
}

/** The name of a tenant's ledger of a chain: its Durable Object's name, and what its storage is marked with. */
export function ledgerName(chain: Chain, sandboxTenantId: string): string {
  if (typeof sandboxTenantId !== "string" || sandboxTenantId === "") throw new RangeError(`a ledger of ${chain} belongs to a sandbox tenant`);
  return `${sandboxTenantId}:${chain}`;
}

/** The simulated ledgers in memory, each an engine over its own memorySimStorage, created on first use. */
export function memorySimulatedChains(clock: Clock): SimulatedChains {
  const engines = new Map<string, SimChainEngine>();
  return {
    chain(chain, sandboxTenantId) {
      assertSimulatedChain(chain);
      const name = ledgerName(chain, sandboxTenantId);
      let engine = engines.get(name);
      if (!engine) {
        engine = new SimChainEngine(chain, memorySimStorage(), clock, name);
        engines.set(name, engine);
      }
      return engine;
    },
  };
}
