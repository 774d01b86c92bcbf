import { expect, test } from "bun:test";
import { memorySimStorage, type SimStorage } from "./sim-storage.ts";

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
