import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onceMoreOnReset, removeOrphanedBundles, retryingOnReset } from "./integration.ts";

/** A D1 stand-in whose calls fail with `failures` errors first, counting calls. */
function fakeD1(failures: string[]) {
  const calls: string[] = [];
  const made = new Set<object>();
  const next = async (what: string) => {
    calls.push(what);
    const err = failures.shift();
    if (err) throw new TypeError(err);
    return { what };
  };
  const statement = (sql: string, args: unknown[] = []) => {
    const s = {
      sql,
      args,
      bind: (...a: unknown[]) => statement(sql, a),
      first: () => next(`first ${sql} ${args.join(",")}`),
      all: () => next(`all ${sql}`),
      run: () => next(`run ${sql}`),
      raw: () => next(`raw ${sql}`),
    };
    made.add(s);
    return s;
  };
  const db = {
    prepare: (sql: string) => statement(sql),
    batch: (s: { sql: string }[]) => next(`batch ${s.map((x) => (made.has(x) ? x.sql : "a statement not its own")).join(";")}`),
    exec: (q: string) => next(`exec ${q}`),
  };
  return { db: db as unknown as D1Database, calls };
}

describe("the test stack's D1 (Miniflare's proxy through Bun's keep-alive pool)", () => {
  test("a call that fails with ECONNRESET runs once more", async () => {
    const { db, calls } = fakeD1(["ECONNRESET: The socket connection was closed unexpectedly"]);
    expect(await retryingOnReset(db).prepare("SELECT ?").bind(1).first()).toEqual({ what: "first SELECT ? 1" });
    expect(calls).toEqual(["first SELECT ? 1", "first SELECT ? 1"]);
  });

  test("only once, and any other error is not retried", async () => {
    const twice = fakeD1(["ECONNRESET", "ECONNRESET"]);
    await expect(retryingOnReset(twice.db).prepare("SELECT 1").all()).rejects.toThrow("ECONNRESET");
    expect(twice.calls).toHaveLength(2);
    const other = fakeD1(["D1_ERROR: no such table"]);
    await expect(retryingOnReset(other.db).exec("SELECT 1")).rejects.toThrow("no such table");
    expect(other.calls).toHaveLength(1);
  });

  test("getting a binding through the proxy is tried once more on a reset too, and only once", async () => {
    let calls = 0;
    const flaky = (failures: number) => async () => {
      calls++;
      if (calls <= failures) throw new TypeError("ECONNRESET: The socket connection was closed unexpectedly");
      return "binding";
    };
    expect(await onceMoreOnReset(flaky(1))).toBe("binding");
    expect(calls).toBe(2);
    calls = 0;
    await expect(onceMoreOnReset(flaky(2))).rejects.toThrow("ECONNRESET");
    expect(calls).toBe(2);
  });

  test("a batch gets the proxy's own statements back", async () => {
    const { db, calls } = fakeD1(["ECONNRESET"]);
    const wrapped = retryingOnReset(db);
    await wrapped.batch([wrapped.prepare("SELECT 1"), wrapped.prepare("SELECT 2").bind(2)]);
    expect(calls).toEqual(["batch SELECT 1;SELECT 2", "batch SELECT 1;SELECT 2"]);
  });
});

describe("test bundle directories", () => {
  test("those of processes that are gone are removed; this process's and a live one's stay", async () => {
    const dist = mkdtempSync(join(tmpdir(), "dist-"));
    const child = Bun.spawn(["sleep", "30"]);
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    for (const pid of [process.pid, child.pid, gone.pid]) mkdirSync(join(dist, `.test-${pid}`, "api"), { recursive: true });
    mkdirSync(join(dist, "api"));
    try {
      expect(removeOrphanedBundles(dist)).toEqual([`.test-${gone.pid}`]);
      expect(readdirSync(dist).sort()).toEqual([`.test-${child.pid}`, `.test-${process.pid}`, "api"].sort());
    } finally {
      child.kill();
    }
  });
});
