import { expect, test } from "bun:test";
import { countingD1, countRoundTrips, newRoundTripCounter, totalRoundTrips, uncounted, withRoundTripCount } from "./round-trips.ts";

/** A D1 stand-in that answers every statement with one row. */
function fakeD1(): D1Database {
  const stmt = (sql: string): D1PreparedStatement =>
    ({
      sql,
      bind: () => stmt(sql),
      first: async () => ({ sql }),
      run: async () => ({ results: [], success: true, meta: {} }),
      all: async () => ({ results: [{ sql }], success: true, meta: {} }),
      raw: async () => [[sql]],
    }) as unknown as D1PreparedStatement;
  return {
    prepare: stmt,
    batch: async (stmts: D1PreparedStatement[]) => stmts.map((s) => ({ results: [{ sql: (s as unknown as { sql: string }).sql }] })),
    exec: async () => ({ count: 1, duration: 0 }),
  } as unknown as D1Database;
}

test("each statement is one D1 round trip, and a batch of many is one", async () => {
  const counter = newRoundTripCounter();
  const db = countingD1(fakeD1(), () => counter);
  await db.prepare("SELECT 1").bind(1).first();
  await db.prepare("SELECT 2").all();
  expect(counter.d1).toBe(2);
  const results = await db.batch([db.prepare("SELECT 3"), db.prepare("SELECT 4").bind(4), db.prepare("SELECT 5")]);
  expect(counter.d1).toBe(3);
  // The batch runs the statements themselves, unwrapped.
  expect(results.map((r) => (r.results[0] as { sql: string }).sql)).toEqual(["SELECT 3", "SELECT 4", "SELECT 5"]);
});

test("only development with COUNT_ROUND_TRIPS=1 counts; a deployment keeps its env as it is", () => {
  const DB = fakeD1();
  expect(withRoundTripCount({ ENVIRONMENT: "production", COUNT_ROUND_TRIPS: "1", DB })).toBeNull();
  expect(withRoundTripCount({ ENVIRONMENT: "development", DB })).toBeNull();
  const env = { ENVIRONMENT: "development", COUNT_ROUND_TRIPS: "1", DB };
  const counted = withRoundTripCount(env);
  expect(counted?.DB).not.toBe(DB);
  // One counting env per env: what a worker builds once per env stays built once.
  expect(withRoundTripCount(env)).toBe(counted);
});

test("each request counts into its own counter, however they interleave", async () => {
  const env = withRoundTripCount({ ENVIRONMENT: "development", COUNT_ROUND_TRIPS: "1", DB: fakeD1() })!;
  const a = newRoundTripCounter();
  const b = newRoundTripCounter();
  await Promise.all([
    countRoundTrips(a, async () => {
      await env.DB.prepare("SELECT 1").first();
      await Bun.sleep(5);
      await env.DB.prepare("SELECT 2").first();
    }),
    countRoundTrips(b, async () => {
      await env.DB.batch([env.DB.prepare("SELECT 3")]);
    }),
  ]);
  expect(a.d1).toBe(2);
  expect(b.d1).toBe(1);
});

test("work left running after the response (uncounted) is not the request's, even the statement it sends at once", async () => {
  const env = withRoundTripCount({ ENVIRONMENT: "development", COUNT_ROUND_TRIPS: "1", DB: fakeD1() })!;
  const counter = newRoundTripCounter();
  let after: Promise<unknown> | undefined;
  await countRoundTrips(counter, async () => {
    await env.DB.prepare("SELECT 1").first();
    after = uncounted(async () => {
      await env.DB.prepare("SELECT 2").first();
      await env.DB.batch([env.DB.prepare("SELECT 3")]);
    });
    // The request's answer is counted here, with the work after it started but not finished.
    expect(counter.d1).toBe(1);
  });
  await after;
  expect(counter.d1).toBe(1);
});

test("a Durable Object call counts one, plus what the object reports it did", async () => {
  const counter = newRoundTripCounter();
  const stub = { run: async () => ({ ok: true, roundTrips: { d1: 5, doCalls: 1 } }) };
  const namespace = { idFromName: (name: string) => name, get: () => stub } as unknown as DurableObjectNamespace;
  const env = withRoundTripCount({ ENVIRONMENT: "development", COUNT_ROUND_TRIPS: "1", LOANS: namespace })!;
  const loans = env.LOANS as DurableObjectNamespace;
  const result = await countRoundTrips(counter, async () => (await (loans.get(loans.idFromName("loan")) as unknown as typeof stub).run()) as { ok: boolean });
  expect(result.ok).toBe(true);
  expect(counter.doCalls).toBe(1);
  expect(counter.inObjects).toEqual({ d1: 5, doCalls: 1 });
  expect(totalRoundTrips(counter)).toEqual({ d1: 5, doCalls: 2 });
});
