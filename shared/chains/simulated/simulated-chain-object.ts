import { DurableObject } from "cloudflare:workers";
import { systemClock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import {
  SimChainEngine,
  type SimEmitLogInput,
  type SimEmitLogResult,
  type SimEvmSubmitInput,
  type SimEvmSubmitResult,
  type SimFaucetInput,
  type SimFaucetResult,
  type SimFundInput,
  type SimFundResult,
  type SimReadResult,
  type SimTransaction,
  type SimTransferInput,
  type SimTransferResult,
} from "./sim-chain-engine.ts";
import { toRpcResult, type SimRpcResult } from "./sim-chain-rejected.ts";
import { cachedSimStorage } from "./sim-storage.ts";

/** Which ledger a call is for: the chain, and the object's name `<tenantId>:<chain>`. */
export type SimLedger = { chain: Chain; name: string };

/**
 * One Durable Object per sandbox tenant and simulated chain
 * (`idFromName("<tenantId>:<chain>")`): that ledger's single writer, its state
 * in the object's storage. The engine only awaits its own storage, so the
 * input gate keeps each call whole. Every method takes the ledger (the object
 * cannot read its own name; the engine marks its storage with it and refuses
 * another) and answers a SimRpcResult, so rejections cross RPC as values.
 * Exported from the api worker's entry; others use `durableSimulatedChains`.
 */
export class SimulatedChainObject extends DurableObject {
  private engine: SimChainEngine | null = null;

  faucet(ledger: SimLedger, input: SimFaucetInput): Promise<SimRpcResult<SimFaucetResult>> {
    return toRpcResult(() => this.engineFor(ledger).faucet(input));
  }

  submitEvmTransaction(ledger: SimLedger, input: SimEvmSubmitInput): Promise<SimRpcResult<SimEvmSubmitResult>> {
    return toRpcResult(() => this.engineFor(ledger).submitEvmTransaction(input));
  }

  transferToken(ledger: SimLedger, input: SimTransferInput): Promise<SimRpcResult<SimTransferResult>> {
    return toRpcResult(() => this.engineFor(ledger).transferToken(input));
  }

  emitLogAs(ledger: SimLedger, input: SimEmitLogInput): Promise<SimRpcResult<SimEmitLogResult>> {
    return toRpcResult(() => this.engineFor(ledger).emitLogAs(input));
  }

  fundFromPool(ledger: SimLedger, input: SimFundInput): Promise<SimRpcResult<SimFundResult>> {
    return toRpcResult(() => this.engineFor(ledger).fundFromPool(input));
  }

  readTransactions(ledger: SimLedger, afterBlock: number, limit: number): Promise<SimRpcResult<SimReadResult>> {
    return toRpcResult(() => this.engineFor(ledger).readTransactions(afterBlock, limit));
  }

  head(ledger: SimLedger): Promise<SimRpcResult<number>> {
    return toRpcResult(() => this.engineFor(ledger).head());
  }

  getTransaction(ledger: SimLedger, hash: string): Promise<SimRpcResult<SimTransaction | null>> {
    return toRpcResult(() => this.engineFor(ledger).getTransaction(hash));
  }

  balanceOf(ledger: SimLedger, address: string, token?: string): Promise<SimRpcResult<bigint>> {
    return toRpcResult(() => this.engineFor(ledger).balanceOf(address, token));
  }

  allowance(ledger: SimLedger, owner: string, spender: string): Promise<SimRpcResult<bigint>> {
    return toRpcResult(() => this.engineFor(ledger).allowance(owner, spender));
  }

  nonceOf(ledger: SimLedger, address: string): Promise<SimRpcResult<number>> {
    return toRpcResult(() => this.engineFor(ledger).nonceOf(address));
  }

  private engineFor(ledger: SimLedger): SimChainEngine {
    if (!this.engine) this.engine = new SimChainEngine(ledger.chain, cachedSimStorage(this.ctx.storage), systemClock, ledger.name);
    else if (this.engine.chain !== ledger.chain || this.engine.ledger !== ledger.name) {
      throw new Error(`this object simulates ${this.engine.ledger}, not ${ledger.name}`);
    }
    return this.engine;
  }
}
