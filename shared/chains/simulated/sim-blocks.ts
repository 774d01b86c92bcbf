import type { ChainTransaction } from "../chain-port.ts";
import type { SimChainContext } from "./sim-chain-context.ts";
import type { SimReadResult, SimTransaction } from "./sim-chain-ops.ts";
import { ledgerKey } from "./sim-ledger-store.ts";
import type { SimStorage } from "./sim-storage.ts";
import type { WorkingState } from "./sim-working-state.ts";

/** At most this many transactions per `readTransactions` call. */
export const SIM_READ_LIMIT = 1000;

/** The latest block: one transaction per block, so its number counts the transactions. */
type Head = { number: number; timestamp: number };

/** Appends the transaction as the next block; its time never runs backwards. */
export async function include(ctx: SimChainContext, state: WorkingState, build: (block: Head) => SimTransaction): Promise<SimTransaction> {
  const previous = (await state.get<Head>(ledgerKey.head)) ?? { number: 0, timestamp: 0 };
  const block: Head = {
    number: previous.number + 1,
    timestamp: Math.max(previous.timestamp, Math.floor(ctx.clock.now().getTime() / 1000)),
  };
  const tx = build(block);
  state.set(ledgerKey.head, block);
  state.set(ledgerKey.block(block.number), tx);
  state.set(ledgerKey.hash(tx.hash), block.number);
  return tx;
}

/** The latest block number (0 before the first transaction). */
export async function headNumber(state: WorkingState): Promise<number> {
  return (await state.get<Head>(ledgerKey.head))?.number ?? 0;
}

export async function transactionByHash(state: WorkingState, hash: string): Promise<SimTransaction | null> {
  const block = await state.get<number>(ledgerKey.hash(hash));
  return block === undefined ? null : ((await state.get<SimTransaction>(ledgerKey.block(block))) ?? null);
}

/** Transactions after `afterBlock`, at most `limit` (capped at SIM_READ_LIMIT); bad numbers read as 0. */
export async function readTransactions(storage: SimStorage, state: WorkingState, afterBlock: number, limit: number): Promise<SimReadResult> {
  const first = Math.max(0, Math.floor(Number(afterBlock) || 0)) + 1;
  const count = Math.min(SIM_READ_LIMIT, Math.max(0, Math.floor(Number(limit) || 0)));
  const head = await headNumber(state);
  if (count === 0 || first > head) return { transactions: [], head };
  // A read writes nothing, so the stored blocks are the whole truth: list them in one call.
  const blocks = await storage.list<SimTransaction>({ prefix: ledgerKey.blockPrefix, start: ledgerKey.block(first), limit: count });
  return { transactions: [...blocks.values()].map(toChainTransaction), head };
}

/** The port's view of a stored transaction (without the simulator's bookkeeping). */
function toChainTransaction(tx: SimTransaction): ChainTransaction {
  if (tx.family === "EVM") {
    const { kind: _kind, failureReason: _reason, ...evm } = tx;
    return evm;
  }
  const { kind: _kind, failureReason: _reason, ...transfer } = tx;
  return transfer;
}
