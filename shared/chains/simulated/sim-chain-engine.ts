import type { Clock } from "../../domain/clock.ts";
import type { Chain } from "../../domain/rails.ts";
import { headNumber, readTransactions, transactionByHash } from "./sim-blocks.ts";
import { SimChainContext } from "./sim-chain-context.ts";
import type {
  SimChainOps,
  SimEmitLogInput,
  SimEmitLogResult,
  SimEvmSubmitInput,
  SimEvmSubmitResult,
  SimFaucetInput,
  SimFaucetResult,
  SimFundInput,
  SimFundResult,
  SimReadResult,
  SimTransaction,
  SimTransferInput,
  SimTransferResult,
} from "./sim-chain-ops.ts";
import { submitEvmTransaction } from "./sim-evm-execution.ts";
import { faucet } from "./sim-faucet.ts";
import { fundFromPool } from "./sim-funding.ts";
import { emitLogAs } from "./sim-impostor-logs.ts";
import * as store from "./sim-ledger-store.ts";
import type { SimStorage } from "./sim-storage.ts";
import { transferToken } from "./sim-token-transfers.ts";
import { WorkingState } from "./sim-working-state.ts";

// The engine's public surface stays where its users import it from; each
// name is defined beside the rule it belongs to.
export type * from "./sim-chain-ops.ts";
export { SIM_READ_LIMIT } from "./sim-blocks.ts";
export { SIM_FAUCET_MINTER } from "./sim-faucet.ts";
export { SIM_POOL_GENESIS_BALANCE } from "./sim-ledger-store.ts";

/**
 * One simulated chain: stablecoin balances, ERC-20 allowances, nonces, one
 * transaction per block, receipts and logs, kept in a SimStorage. The rules
 * are the real ones: EVM transactions are parsed and their sender recovered
 * with viem, calldata is decoded with the real ABIs (erc20Abi, SVC_POOL_ABI),
 * USDC's ERC-20 rules decide success, and a reverted transaction changes
 * nothing but its sender's nonce. Logs are encoded by viem, so a listener
 * that decodes them with the same ABIs reads what a live chain would give it.
 *
 * This class only sequences and stores; each operation is a module beside
 * it: sim-faucet, sim-evm-execution (running sim-erc20 and sim-pool, the code
 * of the two contracts), sim-token-transfers (TON, Solana), sim-impostor-logs,
 * sim-funding and sim-blocks, over the keys of sim-ledger-store, with the
 * chain's configuration and input checks in sim-chain-context.
 *
 * Every operation computes its writes in a WorkingState first and they are
 * stored in one `put`, so a call is applied whole or not at all; operations
 * run one after another (a Durable Object per tenant and chain adds the
 * single-writer guarantee across requests).
 *
 * @example
 * const chain = new SimChainEngine("POLYGON_AMOY", memorySimStorage(), systemClock);
 * await chain.faucet({ address: borrower.address, amount: 100_000_000n });
 * await chain.submitEvmTransaction({ serializedTransaction: await borrower.signTransaction(approveTx) });
 */
export class SimChainEngine implements SimChainOps {
  private readonly ctx: SimChainContext;
  private queue: Promise<unknown> = Promise.resolve();
  private chainMarked = false;

  /**
   * `ledger` names whose ledger this is (`<tenantId>:<chain>` for a sandbox
   * tenant's): it is written into the storage on first use and checked after,
   * and it makes the hashes of unsigned transactions unique to the ledger.
   */
  constructor(
    readonly chain: Chain,
    private readonly storage: SimStorage,
    clock: Clock,
    readonly ledger: string = chain,
  ) {
    this.ctx = new SimChainContext(chain, ledger, clock);
  }

  faucet(input: SimFaucetInput): Promise<SimFaucetResult> {
    return this.serially((state) => faucet(this.ctx.at(input?.at), state, input));
  }

  submitEvmTransaction(input: SimEvmSubmitInput): Promise<SimEvmSubmitResult> {
    return this.serially((state) => submitEvmTransaction(this.ctx.at(input?.at), state, input));
  }

  transferToken(input: SimTransferInput): Promise<SimTransferResult> {
    return this.serially((state) => transferToken(this.ctx.at(input?.at), state, input));
  }

  emitLogAs(input: SimEmitLogInput): Promise<SimEmitLogResult> {
    return this.serially((state) => emitLogAs(this.ctx.at(input?.at), state, input));
  }

  fundFromPool(input: SimFundInput): Promise<SimFundResult> {
    return this.serially((state) => fundFromPool(this.ctx.at(input?.at), state, input));
  }

  readTransactions(afterBlock: number, limit: number): Promise<SimReadResult> {
    return this.serially((state) => readTransactions(this.storage, state, afterBlock, limit));
  }

  head(): Promise<number> {
    return this.serially((state) => headNumber(state));
  }

  getTransaction(hash: string): Promise<SimTransaction | null> {
    return this.serially(async (state) => (typeof hash === "string" ? transactionByHash(state, hash) : null));
  }

  balanceOf(address: string, token?: string): Promise<bigint> {
    return this.serially(async (state) => store.balance(this.ctx, state, this.ctx.token(token), this.ctx.address(address, "address")));
  }

  allowance(owner: string, spender: string): Promise<bigint> {
    return this.serially(async (state) => {
      this.ctx.requireFamily("EVM", "allowance");
      return store.allowance(state, this.ctx.stablecoin, this.ctx.address(owner, "owner"), this.ctx.address(spender, "spender"));
    });
  }

  nonceOf(address: string): Promise<number> {
    return this.serially(async (state) => {
      this.ctx.requireFamily("EVM", "nonceOf");
      return store.nonce(state, this.ctx.address(address, "address"));
    });
  }

  /**
   * Runs operations one at a time, each on a fresh working state, and stores
   * what it wrote in one `put` once it returns (a rejection throws first and
   * stores nothing). The first one claims the storage for this chain and
   * ledger, or refuses another's.
   */
  private serially<T>(op: (state: WorkingState) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (!this.chainMarked) {
        await store.claimStorage(this.storage, this.chain, this.ledger);
        this.chainMarked = true;
      }
      const state = new WorkingState(this.storage);
      const result = await op(state);
      // Reads and an idempotent answer write nothing: no empty put.
      if (state.hasWrites()) await this.storage.put(state.entries());
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
