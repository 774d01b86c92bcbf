import { describe, expect, test } from "bun:test";
import { fixedClock } from "../../domain/clock.ts";
import { SimChainEngine } from "./sim-chain-engine.ts";
import { memorySimStorage, type SimStorage } from "./sim-storage.ts";
import { WorkingState } from "./sim-working-state.ts";

const START = new Date("2026-11-21T10:00:00.000Z");
const wallet = (byte: number) => `0:${byte.toString(16).padStart(2, "0").repeat(32)}`;
const LOAN_ID = "0b7a3c1e-5f2d-4e8a-9c6b-1d2e3f4a5b6c";

describe("WorkingState", () => {
  test("reads see pending writes over the storage; nothing is stored by the state itself", async () => {
    const storage = memorySimStorage();
    await storage.put({ a: 1n, b: 2n });
    const state = new WorkingState(storage);
    expect(state.hasWrites()).toBe(false);
    state.set("a", 10n);
    expect(await state.get("a")).toBe(10n);
    expect(await state.get("b")).toBe(2n);
    expect(state.hasWrites()).toBe(true);
    expect(state.entries()).toEqual({ a: 10n });
    expect(await storage.get("a")).toBe(1n);
  });

  test("a fork's writes reach its parent only when merged (a reverted EVM call leaves no trace)", async () => {
    const state = new WorkingState(memorySimStorage());
    state.set("a", 1n);
    const reverted = state.fork();
    reverted.set("a", 2n);
    expect(await reverted.get("a")).toBe(2n);
    expect(await state.get("a")).toBe(1n);
    const succeeded = state.fork();
    succeeded.set("b", 3n);
    succeeded.mergeIntoParent();
    expect(state.entries()).toEqual({ a: 1n, b: 3n });
    expect(() => state.mergeIntoParent()).toThrow("only a fork merges into its parent");
  });
});

describe("SimChainEngine stores each operation's writes", () => {
  /** A memory storage that records the key count of every multi-key put. */
  function countingStorage(): { storage: SimStorage; puts: number[] } {
    const inner = memorySimStorage();
    const puts: number[] = [];
    const storage: SimStorage = {
      get: (k) => inner.get(k),
      list: (o) => inner.list(o),
      put: (async (keyOrEntries: string | Record<string, unknown>, value?: unknown) => {
        if (typeof keyOrEntries === "string") return inner.put(keyOrEntries, value);
        puts.push(Object.keys(keyOrEntries).length);
        return inner.put(keyOrEntries);
      }) as SimStorage["put"],
    };
    return { storage, puts };
  }

  test("one put per write, none for reads, rejections or an already-sent funding", async () => {
    const { storage, puts } = countingStorage();
    const chain = new SimChainEngine("TON_TESTNET", storage, fixedClock(START));
    await chain.faucet({ address: wallet(1), amount: 5n });
    // The ledger marker (chain, ledger), then the faucet: balance, head, block, hash.
    expect(puts).toEqual([2, 4]);

    const funding = { loanId: LOAN_ID, to: wallet(2), amount: 3n, reference: `funding:${LOAN_ID}` };
    const sent = await chain.fundFromPool(funding);
    expect(puts).toHaveLength(3);

    await chain.head();
    await chain.readTransactions(0, 10);
    await chain.getTransaction(sent.txHash);
    await chain.balanceOf(wallet(1));
    expect(await chain.fundFromPool(funding)).toEqual(sent);
    await expect(chain.faucet({ address: wallet(1), amount: 0n })).rejects.toThrow("amount must be a positive integer");
    expect(puts).toHaveLength(3);
  });
});
