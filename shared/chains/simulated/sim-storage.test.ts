import { expect, test } from "bun:test";
import { cachedSimStorage, memorySimStorage, type SimStorage } from "./sim-storage.ts";

test("a Durable Object's storage is a SimStorage as is (the compiler checks this line)", () => {
  const asSimStorage = (storage: DurableObjectStorage): SimStorage => storage;
  expect(asSimStorage).toBeFunction();
});

test("get answers what put stored, as a copy; missing keys are undefined", async () => {
  const storage = memorySimStorage();
  const value = { amount: 10n, logs: [{ topics: ["0x01"] }] };
  await storage.put("k", value);
  value.logs[0]!.topics.push("0x02");
  const read = await storage.get<typeof value>("k");
  expect(read).toEqual({ amount: 10n, logs: [{ topics: ["0x01"] }] });
  read!.amount = 0n;
  expect((await storage.get<typeof value>("k"))!.amount).toBe(10n);
  expect(await storage.get("missing")).toBeUndefined();
});

test("put of entries writes them all; an uncloneable value writes none", async () => {
  const storage = memorySimStorage();
  await storage.put({ a: 1, b: 2 });
  expect([...(await storage.list({ prefix: "" })).entries()]).toEqual([
    ["a", 1],
    ["b", 2],
  ]);
  await expect(storage.put({ c: 3, d: () => 4 })).rejects.toThrow();
  expect(await storage.get("c")).toBeUndefined();
});

test("list filters by prefix, starts at start (inclusive), orders by key, stops at limit", async () => {
  const storage = memorySimStorage();
  await storage.put({ "block:03": 3, "block:01": 1, "block:02": 2, "bal:x": 9, blocks: 0 });
  const keys = async (options: Parameters<SimStorage["list"]>[0]) => [...(await storage.list(options)).keys()];
  expect(await keys({ prefix: "block:" })).toEqual(["block:01", "block:02", "block:03"]);
  expect(await keys({ prefix: "block:", start: "block:02" })).toEqual(["block:02", "block:03"]);
  expect(await keys({ prefix: "block:", limit: 2 })).toEqual(["block:01", "block:02"]);
  expect(await keys({ prefix: "block:", start: "block:04" })).toEqual([]);
  expect(await keys({ prefix: "b" })).toEqual(["bal:x", "block:01", "block:02", "block:03", "blocks"]);
});

/** A memory storage that counts its reads and can be told to store its next write and then throw (an unknown outcome) or to hold its next read. */
function countedStorage() {
  const inner = memorySimStorage();
  const counts = { gets: 0 };
  const control: { failNextPut: boolean; holdNextGet?: Promise<void> } = { failNextPut: false };
  const storage: SimStorage = {
    async get<T>(key: string) {
      counts.gets++;
      const value = await inner.get<T>(key);
      const hold = control.holdNextGet;
      control.holdNextGet = undefined;
      if (hold) await hold;
      return value;
    },
    async put<T>(keyOrEntries: string | Record<string, T>, value?: T) {
      await (typeof keyOrEntries === "string" ? inner.put(keyOrEntries, value as T) : inner.put(keyOrEntries));
      if (control.failNextPut) {
        control.failNextPut = false;
        throw new Error("storage write failed");
      }
    },
    list: (options) => inner.list(options),
  };
  return { storage, inner, counts, control };
}

test("cached: a key is read from storage once (missing keys too), then from memory, as a copy", async () => {
  const { storage, inner, counts } = countedStorage();
  await inner.put("balance", { amount: 5n });
  const cached = cachedSimStorage(storage);
  const first = await cached.get<{ amount: bigint }>("balance");
  first!.amount = 0n;
  expect(await cached.get<{ amount: bigint }>("balance")).toEqual({ amount: 5n });
  expect(await cached.get("missing")).toBeUndefined();
  expect(await cached.get("missing")).toBeUndefined();
  expect(counts.gets).toBe(2);
});

test("cached: a write is stored; a key read before is updated in memory, a key only written is read from storage once", async () => {
  const { storage, inner, counts } = countedStorage();
  const cached = cachedSimStorage(storage);
  expect(await cached.get("nonce")).toBeUndefined();
  const tx = { hash: "0x01", logs: [1] };
  await cached.put({ nonce: 1, "tx:1": tx });
  tx.logs.push(2);
  expect(await inner.get("nonce")).toBe(1);
  expect(await cached.get("nonce")).toBe(1);
  expect(counts.gets).toBe(1);
  expect(await cached.get("tx:1")).toEqual({ hash: "0x01", logs: [1] });
  expect(await cached.get("tx:1")).toEqual({ hash: "0x01", logs: [1] });
  expect(counts.gets).toBe(2);
  expect([...(await cached.list({ prefix: "tx:" })).keys()]).toEqual(["tx:1"]);
});

test("cached: a write that threw is forgotten (it may have been stored), so the next read asks storage", async () => {
  const { storage, inner, counts, control } = countedStorage();
  await inner.put("balance", 5n);
  const cached = cachedSimStorage(storage);
  expect(await cached.get("balance")).toBe(5n);
  control.failNextPut = true;
  await expect(cached.put({ balance: 7n })).rejects.toThrow("storage write failed");
  expect(await cached.get("balance")).toBe(7n);
  expect(counts.gets).toBe(2);
});

test("cached: a read that a write overtook is not remembered", async () => {
  const { storage, counts, control } = countedStorage();
  const cached = cachedSimStorage(storage);
  let release!: () => void;
  control.holdNextGet = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slowRead = cached.get("head");
  await cached.put("head", 2);
  release();
  expect(await slowRead).toBeUndefined();
  // Not remembered as missing: the next read asks storage and finds the write.
  expect(await cached.get("head")).toBe(2);
  expect(counts.gets).toBe(2);
});

test("cached: at most maxEntries keys are kept, the least recently used go first", async () => {
  const { storage, inner, counts } = countedStorage();
  await inner.put({ a: 1, b: 2, c: 3 });
  const cached = cachedSimStorage(storage, 2);
  expect([await cached.get("a"), await cached.get("b"), await cached.get("a")]).toEqual([1, 2, 1]);
  expect(await cached.get("c")).toBe(3);
  expect(counts.gets).toBe(3);
  expect([await cached.get("a"), await cached.get("c")]).toEqual([1, 3]);
  expect(counts.gets).toBe(3);
  expect(await cached.get("b")).toBe(2);
  expect(counts.gets).toBe(4);
});
