import { describe, expect, test } from "bun:test";
import { fixedClock } from "../../domain/clock.ts";
import { CHAIN_CONFIG } from "../chain-config.ts";
import { SIM_READ_LIMIT, SimChainEngine } from "./sim-chain-engine.ts";
import { memorySimStorage, type SimStorage } from "./sim-storage.ts";

const START = new Date("2026-11-21T10:00:00.000Z");
const SETTLEMENT = CHAIN_CONFIG.TON_TESTNET.settlementWallet!;
const wallet = (byte: number) => `0:${byte.toString(16).padStart(2, "0").repeat(32)}`;

/** A TON chain with `n` faucet transactions, one per block. */
async function chainWith(n: number, storage: SimStorage = memorySimStorage(), clock = fixedClock(START)) {
  const chain = new SimChainEngine("TON_TESTNET", storage, clock);
  for (let i = 1; i <= n; i++) await chain.faucet({ address: wallet(i), amount: BigInt(i) });
  return chain;
}

describe("readTransactions", () => {
  test("starts after the cursor block, oldest first, at most limit, with the head", async () => {
    const chain = await chainWith(5);
    const page = await chain.readTransactions(1, 2);
    expect(page.head).toBe(5);
    expect(page.transactions.map((t) => t.blockNumber)).toEqual([2, 3]);
    expect((await chain.readTransactions(3, 100)).transactions.map((t) => t.blockNumber)).toEqual([4, 5]);
    expect((await chain.readTransactions(0, 100)).transactions.map((t) => t.blockNumber)).toEqual([1, 2, 3, 4, 5]);
  });

  test("paging by the last block read visits every transaction once", async () => {
    const chain = await chainWith(7);
    const seen: number[] = [];
    let cursor = 0;
    for (;;) {
      const { transactions } = await chain.readTransactions(cursor, 3);
      if (transactions.length === 0) break;
      seen.push(...transactions.map((t) => t.blockNumber));
      cursor = transactions.at(-1)!.blockNumber;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  test("at or past the head, with a zero or negative limit: nothing", async () => {
    const chain = await chainWith(3);
    expect(await chain.readTransactions(3, 10)).toEqual({ transactions: [], head: 3 });
    expect(await chain.readTransactions(99, 10)).toEqual({ transactions: [], head: 3 });
    expect((await chain.readTransactions(0, 0)).transactions).toEqual([]);
    expect((await chain.readTransactions(0, -4)).transactions).toEqual([]);
    expect((await chain.readTransactions(-10, 1)).transactions.map((t) => t.blockNumber)).toEqual([1]);
  });

  test("an empty chain has head 0", async () => {
    const chain = await chainWith(0);
    expect(await chain.readTransactions(0, 10)).toEqual({ transactions: [], head: 0 });
    expect(await chain.head()).toBe(0);
  });

  test("block order survives more than ten blocks (keys are zero-padded)", async () => {
    const chain = await chainWith(12);
    expect((await chain.readTransactions(8, 10)).transactions.map((t) => t.blockNumber)).toEqual([9, 10, 11, 12]);
  });

  test(`the limit is capped at ${SIM_READ_LIMIT}`, async () => {
    const storage = memorySimStorage();
    const chain = new SimChainEngine("TON_TESTNET", storage, fixedClock(START));
    // Faster than 1001 faucets: the same store, written directly in the engine's layout.
    await chain.faucet({ address: wallet(1), amount: 1n });
    const [first] = (await chain.readTransactions(0, 1)).transactions;
    const entries: Record<string, unknown> = {};
    for (let n = 2; n <= SIM_READ_LIMIT + 1; n++)
      entries[`block:${String(n).padStart(16, "0")}`] = { ...first, blockNumber: n, kind: "faucet", failureReason: null };
    entries.head = { number: SIM_READ_LIMIT + 1, timestamp: 0 };
    await storage.put(entries);
    const page = await chain.readTransactions(0, SIM_READ_LIMIT * 5);
    expect(page.transactions).toHaveLength(SIM_READ_LIMIT);
    expect(page.head).toBe(SIM_READ_LIMIT + 1);
  });

  test("returns the port's type only: no simulator bookkeeping", async () => {
    const chain = await chainWith(1);
    await chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 2n, comment: "c" });
    for (const tx of (await chain.readTransactions(0, 10)).transactions) {
      expect(Object.keys(tx).sort()).toEqual([
        "amount",
        "blockNumber",
        "chain",
        "comment",
        "family",
        "from",
        "hash",
        "sandboxTenantId",
        "status",
        "timestamp",
        "to",
        "token",
      ]);
    }
    const failed = (await chain.readTransactions(1, 1)).transactions[0]!;
    expect(await chain.getTransaction(failed.hash)).toMatchObject({ ...failed, kind: "transfer", failureReason: expect.stringMatching(/insufficient/) });
    expect(await chain.getTransaction("0x" + "0".repeat(64))).toBeNull();
  });
});

describe("blocks", () => {
  test("one transaction per block, numbered from 1, hashes unique", async () => {
    const chain = await chainWith(4);
    const { transactions } = await chain.readTransactions(0, 10);
    expect(transactions.map((t) => t.blockNumber)).toEqual([1, 2, 3, 4]);
    expect(new Set(transactions.map((t) => t.hash)).size).toBe(4);
  });

  test("timestamps are the clock's unix seconds and never run backwards", async () => {
    const clock = fixedClock(START);
    const chain = new SimChainEngine("TON_TESTNET", memorySimStorage(), clock);
    await chain.faucet({ address: wallet(1), amount: 1n });
    clock.advance(90_500);
    await chain.faucet({ address: wallet(1), amount: 1n });
    clock.set(new Date(START.getTime() - 3_600_000));
    await chain.faucet({ address: wallet(1), amount: 1n });
    const t0 = Math.floor(START.getTime() / 1000);
    expect((await chain.readTransactions(0, 10)).transactions.map((t) => t.timestamp)).toEqual([t0, t0 + 90, t0 + 90]);
  });

  test("a write that names its time (the tenant's sandbox clock) is stamped with it, never before the previous block; a bad time is refused", async () => {
    const clock = fixedClock(START);
    const chain = new SimChainEngine("TON_TESTNET", memorySimStorage(), clock);
    const t0 = Math.floor(START.getTime() / 1000);
    // Five days ahead of the system clock, as a tenant's advanced sandbox clock.
    await chain.faucet({ address: wallet(1), amount: 5n, at: new Date(START.getTime() + 5 * 86_400_000) });
    await chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 1n, comment: null, at: new Date(START.getTime() + 5 * 86_400_000 + 61_000) });
    // Named earlier than the last block, or not named (the system clock): the chain's time stands.
    await chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 1n, comment: null, at: START });
    await chain.faucet({ address: wallet(1), amount: 1n });
    await chain.fundFromPool({
      loanId: crypto.randomUUID(),
      to: wallet(2),
      amount: 1n,
      reference: "funding:x",
      at: new Date(START.getTime() + 6 * 86_400_000),
    });
    expect((await chain.readTransactions(0, 10)).transactions.map((t) => t.timestamp - t0)).toEqual([
      5 * 86_400,
      5 * 86_400 + 61,
      5 * 86_400 + 61,
      5 * 86_400 + 61,
      6 * 86_400,
    ]);
    for (const at of [new Date(Number.NaN), "2026-11-21" as unknown as Date]) {
      await expect(chain.faucet({ address: wallet(1), amount: 1n, at })).rejects.toThrow("at must be a valid Date");
    }
    expect(await chain.head()).toBe(5);
  });

  test("concurrent calls are applied one at a time", async () => {
    const chain = await chainWith(0);
    await chain.faucet({ address: wallet(1), amount: 100n });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 10n, comment: `${i}` }) : chain.faucet({ address: wallet(1), amount: 1n }),
      ),
    );
    expect(results.map((r) => r.blockNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(await chain.balanceOf(wallet(1))).toBe(100n - 100n + 10n);
  });
});

describe("storage", () => {
  test("state lives in storage: a new engine over the same storage continues the chain", async () => {
    const storage = memorySimStorage();
    await chainWith(3, storage);
    const again = new SimChainEngine("TON_TESTNET", storage, fixedClock(START));
    expect(await again.head()).toBe(3);
    expect(await again.balanceOf(wallet(2))).toBe(2n);
    expect((await again.faucet({ address: wallet(2), amount: 1n })).blockNumber).toBe(4);
  });

  test("a call's writes are stored together: a failed store leaves no trace", async () => {
    const inner = memorySimStorage();
    let failNextMultiPut = false;
    const flaky: SimStorage = {
      get: (k) => inner.get(k),
      list: (o) => inner.list(o),
      put: (async (keyOrEntries: string | Record<string, unknown>, value?: unknown) => {
        if (typeof keyOrEntries === "string") return inner.put(keyOrEntries, value);
        if (failNextMultiPut) {
          failNextMultiPut = false;
          throw new Error("storage unavailable");
        }
        return inner.put(keyOrEntries);
      }) as SimStorage["put"],
    };
    const chain = await chainWith(1, flaky);
    failNextMultiPut = true;
    await expect(chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 1n })).rejects.toThrow("storage unavailable");
    expect(await chain.head()).toBe(1);
    expect(await chain.balanceOf(wallet(1))).toBe(1n);
    expect((await chain.transferToken({ from: wallet(1), to: SETTLEMENT, amount: 1n })).blockNumber).toBe(2);
  });

  test("one storage holds one chain", async () => {
    const storage = memorySimStorage();
    await chainWith(1, storage);
    const wrong = new SimChainEngine("SOLANA_DEVNET", storage, fixedClock(START));
    await expect(wrong.head()).rejects.toThrow("holds the simulated chain TON_TESTNET, not SOLANA_DEVNET");
  });

  test("one storage holds one tenant's ledger: another ledger's engine over it is refused", async () => {
    const storage = memorySimStorage();
    await new SimChainEngine("TON_TESTNET", storage, fixedClock(START), "tenant-a:TON_TESTNET").faucet({ address: wallet(1), amount: 1n });
    const other = new SimChainEngine("TON_TESTNET", storage, fixedClock(START), "tenant-b:TON_TESTNET");
    await expect(other.balanceOf(wallet(1))).rejects.toThrow("holds the ledger tenant-a:TON_TESTNET, not tenant-b:TON_TESTNET");
  });

  test("the same unsigned transaction on two tenants' ledgers has two hashes (unmatched payments are kept per hash)", async () => {
    const [a, b] = ["tenant-a", "tenant-b"].map((t) => new SimChainEngine("TON_TESTNET", memorySimStorage(), fixedClock(START), `${t}:TON_TESTNET`));
    const minted = await Promise.all([a!, b!].map((chain) => chain.faucet({ address: wallet(1), amount: 5n })));
    expect(minted[0]!.blockNumber).toBe(minted[1]!.blockNumber);
    expect(minted[0]!.txHash).not.toBe(minted[1]!.txHash);
  });

  test("live chains cannot be simulated", () => {
    expect(() => new SimChainEngine("POLYGON", memorySimStorage(), fixedClock(START))).toThrow(RangeError);
    expect(() => new SimChainEngine("TON", memorySimStorage(), fixedClock(START))).toThrow("TON is not a simulated chain");
  });
});
