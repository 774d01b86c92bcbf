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

/**
 * One Durable Object per simulated chain (`idFromName(chain)`): the chain's
 * single writer, its ledger in the object's storage. The engine only awaits
 * its own storage, so the input gate keeps each call whole. Every method
 * takes the chain (the object cannot read its own name) and answers a
 * SimRpcResult, so rejections cross RPC as values. Exported from the api
 * worker's entry; others use `durableSimulatedChains`.
 */
export class SimulatedChainObject extends DurableObject {
  private engine: SimChainEngine | null = null;

  faucet(chain: Chain, input: SimFaucetInput): Promise<SimRpcResult<SimFaucetResult>> {
    return toRpcResult(() => this.engineFor(chain).faucet(input));
  }

  submitEvmTransaction(chain: Chain, input: SimEvmSubmitInput): Promise<SimRpcResult<SimEvmSubmitResult>> {
    return toRpcResult(() => this.engineFor(chain).submitEvmTransaction(input));
  }

  transferToken(chain: Chain, input: SimTransferInput): Promise<SimRpcResult<SimTransferResult>> {
    return toRpcResult(() => this.engineFor(chain).transferToken(input));
  }

  emitLogAs(chain: Chain, input: SimEmitLogInput): Promise<SimRpcResult<SimEmitLogResult>> {
    return toRpcResult(() => this.engineFor(chain).emitLogAs(input));
  }

  fundFromPool(chain: Chain, input: SimFundInput): Promise<SimRpcResult<SimFundResult>> {
    return toRpcResult(() => this.engineFor(chain).fundFromPool(input));
  }

  readTransactions(chain: Chain, afterBlock: number, limit: number): Promise<SimRpcResult<SimReadResult>> {
    return toRpcResult(() => this.engineFor(chain).readTransactions(afterBlock, limit));
  }

  head(chain: Chain): Promise<SimRpcResult<number>> {
    return toRpcResult(() => this.engineFor(chain).head());
  }

  getTransaction(chain: Chain, hash: string): Promise<SimRpcResult<SimTransaction | null>> {
    return toRpcResult(() => this.engineFor(chain).getTransaction(hash));
  }

  balanceOf(chain: Chain, address: string, token?: string): Promise<SimRpcResult<bigint>> {
    return toRpcResult(() => this.engineFor(chain).balanceOf(address, token));
  }

  allowance(chain: Chain, owner: string, spender: string): Promise<SimRpcResult<bigint>> {
    return toRpcResult(() => this.engineFor(chain).allowance(owner, spender));
  }

  nonceOf(chain: Chain, address: string): Promise<SimRpcResult<number>> {
    return toRpcResult(() => this.engineFor(chain).nonceOf(address));
  }

  private engineFor(chain: Chain): SimChainEngine {
    if (!this.engine) this.engine = new SimChainEngine(chain, this.ctx.storage, systemClock);
    else if (this.engine.chain !== chain) throw new Error(`this object simulates ${this.engine.chain}, not ${chain}`);
    return this.engine;
  }
}
