import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { signAsBorrower } from "../../../../shared/testing/sign-as-borrower.ts";
import { submitTransaction } from "../../../../shared/sandbox/sandbox-chain.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

const DAY_S = 86_400;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const advance = (key: string, seconds: unknown) => t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(key) });
const setLiquidity = (key: string, body: unknown) => t.request("PUT", "/v1/sandbox/liquidity", { body, headers: apiKey(key) });
const getLoan = async (key: string, id: string) => (await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(key) })).body;
/** The loan's event types, oldest first. */
const typesOf = async (key: string, loanId: string): Promise<string[]> => {
  const res = await t.request("GET", `/v1/events?loanId=${loanId}&limit=100`, { headers: apiKey(key) });
  expect(res.status).toBe(200);
  return (res.body.data as { type: string }[]).map((e) => e.type).reverse();
};
const eventsOfType = async (key: string, type: string) =>
  (await t.request("GET", `/v1/events?type=${type}&limit=100`, { headers: apiKey(key) })).body.data as any[];

/** A funded POLYGON_AMOY loan, its borrower topped up by the fee, and its repayment instructions (not yet sent). */
async function loanToRepay() {
  const m = await sandboxTenant(t);
  const borrower = privateKeyToAccount(generatePrivateKey());
  const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
  const faucet = await t.request("POST", "/v1/sandbox/chain/faucet", {
    body: { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" },
    headers: apiKey(m.key),
  });
  expect(faucet.status).toBe(200);
  const instructions = (await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.key) })).body;
  return { m, borrower, loan, instructions };
}

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("sandbox clock", () => {
  test("starts at the system time; advances add up and stay per tenant", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const start = await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(a.key) });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ now: t.clock.now().toISOString(), offsetSeconds: 0 });

    const moved = await advance(a.key, 3600);
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ now: new Date(t.clock.now().getTime() + 3_600_000).toISOString(), offsetSeconds: 3600, swept: { visited: 0, failed: 0 } });
    // Concurrent advances add up: the offset is incremented in SQL.
    await Promise.all(Array.from({ length: 5 }, () => advance(a.key, 60)));
    expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(a.key) })).body.offsetSeconds).toBe(3900);
    expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(b.key) })).body).toEqual({ now: t.clock.now().toISOString(), offsetSeconds: 0 });
  });

  test("new loans are funded on the tenant's clock", async () => {
    const m = await sandboxTenant(t);
    await advance(m.key, 2 * DAY_S);
    const loan = await createdLoan(t, m.key, { tenureDays: 7 });
    const tenantNow = t.clock.now().getTime() + 2 * DAY_S * 1000;
    expect(loan.fundedAt).toBe(new Date(tenantNow).toISOString());
    expect(loan.dueAt).toBe(new Date(tenantNow + 7 * DAY_S * 1000).toISOString());
  });

  test("Overdue and default: past dueAt → loan.overdue once with a late fee per started day; past grace → DEFAULTED and loan.defaulted once", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key, { tenureDays: 3 });
    expect(loan).toMatchObject({ status: "ACTIVE", gracePeriodDays: 3, dailyLateFee: "1.00", totalDue: "102.00" });

    // Not yet due: nothing happens.
    const early = await advance(m.key, 3 * DAY_S - 60);
    expect(early.body.swept).toEqual({ visited: 0, failed: 0 });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);

    // Two minutes later, one minute past dueAt: overdue, one started day. The event is there as soon as advance returns.
    const past = await advance(m.key, 120);
    expect(past.body.swept).toEqual({ visited: 1, failed: 0 });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue"]);
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "ACTIVE", overdue: true, lateFeeDays: 1, lateFee: "1.00", totalDue: "103.00" });
    const [overdue] = await eventsOfType(m.key, "loan.overdue");
    expect(overdue.createdAt).toBe(past.body.now);
    expect(overdue.data.loan).toMatchObject({ id: loan.id, status: "ACTIVE", overdue: true, lateFee: "1.00" });

    // A day later, within grace: two started days, no second loan.overdue.
    await advance(m.key, DAY_S);
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "ACTIVE", lateFeeDays: 2, lateFee: "2.00", totalDue: "104.00" });
    expect((await typesOf(m.key, loan.id)).filter((x) => x === "loan.overdue")).toHaveLength(1);

    // Past dueAt + 3 days of grace: DEFAULTED at the end of grace, late fees stop at 3 days.
    await advance(m.key, 2 * DAY_S);
    const defaulted = await getLoan(m.key, loan.id);
    expect(defaulted).toMatchObject({ status: "DEFAULTED", derivedStatus: "DEFAULTED", lateFeeDays: 3, lateFee: "3.00", totalDue: "105.00" });
    expect(defaulted.defaultedAt).toBe(new Date(Date.parse(loan.dueAt) + 3 * DAY_S * 1000).toISOString());
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);

    // Advancing twice more adds nothing.
    expect((await advance(m.key, 10 * DAY_S)).body.swept).toEqual({ visited: 0, failed: 0 });
    await advance(m.key, 10 * DAY_S);
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "DEFAULTED", lateFee: "3.00", totalDue: "105.00" });
  });

  test("one big jump past grace records both events, in order, once", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key, { tenureDays: 3 });
    await advance(m.key, 30 * DAY_S);
    await advance(m.key, 1);
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
  });

  test("a repayment made on time but not yet credited when the clock jumps past grace: credited first, never overdue or defaulted", async () => {
    const { m, borrower, loan, instructions } = await loanToRepay();
    // Written to the tenant's ledger now (before dueAt), as a transfer racing the advance is, and not yet polled.
    const [tenant] = await t.db.select({ offset: tenants.clockOffsetMs }).from(tenants).where(eq(tenants.id, m.tenantId));
    const ledger = t.simChains.chain("POLYGON_AMOY", m.tenantId);
    let nonce = 0;
    for (const tx of instructions.transactions as { to: string; data: string }[]) {
      const serializedTransaction = await signAsBorrower(borrower, CHAIN_CONFIG.POLYGON_AMOY.chainId!, nonce++, tx);
      const at = new Date(t.clock.now().getTime() + tenant!.offset);
      expect(await ledger.submitEvmTransaction({ serializedTransaction, sandboxTenantId: m.tenantId, requireFundedSender: true, at })).toMatchObject({
        status: "success",
      });
    }
    expect((await getLoan(m.key, loan.id)).status).toBe("ACTIVE");
    const moved = await advance(m.key, 20 * DAY_S);
    expect(moved.status).toBe(200);
    const after = await getLoan(m.key, loan.id);
    expect(after).toMatchObject({ status: "REPAID", lateFee: "0.00", amountPaid: loan.totalDue });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
  });

  test("a ledger that cannot be read before the sweep does not fail the advance (the clock has moved): 200, the sweep ran, the ledger named", async () => {
    const m = await sandboxTenant(t);
    const address = privateKeyToAccount(generatePrivateKey()).address;
    expect(
      (await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "POLYGON_AMOY", address, amount: "1.00" }, headers: apiKey(m.key) })).status,
    ).toBe(200);
    const chain = t.deps.chain as { readTransactions: unknown };
    const original = chain.readTransactions;
    chain.readTransactions = async () => {
      throw new Error("ledger unavailable");
    };
    const errors = console.error;
    console.error = () => {};
    try {
      const res = await advance(m.key, 3600);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ offsetSeconds: 3600, swept: { visited: 0, failed: 0, unreadLedgers: ["POLYGON_AMOY"] } });
    } finally {
      chain.readTransactions = original;
      console.error = errors;
    }
    expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.key) })).body.offsetSeconds).toBe(3600);
  });

  test("a transaction is stamped with the sandbox clock as it is when written, not as the request's principal read it", async () => {
    const { m, borrower, loan, instructions } = await loanToRepay();
    // The principal was read at offset 0; a day's advance commits before the write.
    const stale = { id: m.tenantId, mode: "sandbox" as const, clockOffsetMs: 0 };
    expect((await advance(m.key, DAY_S)).status).toBe(200);
    let nonce = 0;
    for (const tx of instructions.transactions as { to: string; data: string }[]) {
      const signedTransaction = await signAsBorrower(borrower, CHAIN_CONFIG.POLYGON_AMOY.chainId!, nonce++, tx);
      await submitTransaction({ ...t.deps, simChains: t.simChains }, { tenant: stale, chain: "POLYGON_AMOY", signedTransaction });
    }
    const repaid = await getLoan(m.key, loan.id);
    expect(repaid.status).toBe("REPAID");
    expect(Date.parse(repaid.repaidAt)).toBeGreaterThanOrEqual(t.clock.now().getTime() + DAY_S * 1000 - 1_000);
  });

  test("advancing one tenant never sweeps another tenant's loans", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const theirs = await createdLoan(t, b.key, { tenureDays: 3 });
    await advance(a.key, 30 * DAY_S);
    expect(await getLoan(b.key, theirs.id)).toMatchObject({ status: "ACTIVE", overdue: false, lateFee: "0.00" });
    expect(await typesOf(b.key, theirs.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
  });

  describe("errors", () => {
    let key: string;
    beforeAll(async () => {
      key = (await sandboxTenant(t)).key;
    });

    test.each([
      ["0", 0],
      ["negative", -60],
      ["fractional", 1.5],
      ["a string", "60"],
      ["null", null],
      ["more than 400 days", 400 * DAY_S + 1],
    ])("seconds %s: 400 naming seconds", async (_name, seconds) => {
      const res = await advance(key, seconds);
      expectFieldErrors(res, "seconds");
      expect(res.body.message).toHaveLength(1);
    });

    test("exactly 400 days is accepted; a missing body field is named", async () => {
      expect((await advance(key, 400 * DAY_S)).status).toBe(200);
      expectFieldErrors(await t.request("POST", "/v1/sandbox/clock/advance", { body: {}, headers: apiKey(key) }), "seconds");
    });

    test("a rejected advance does not move the clock", async () => {
      const m = await sandboxTenant(t);
      await advance(m.key, -1);
      expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.key) })).body.offsetSeconds).toBe(0);
    });
  });
});

describe("sandbox liquidity", () => {
  test("an empty pool leaves a new loan CREATED (AWAITING_LIQUIDITY) with loan.funding_failed and liquidity.unavailable; liquidity back funds it before the PUT answers", async () => {
    const m = await sandboxTenant(t);
    const emptied = await setLiquidity(m.key, { available: "0.00" });
    expect(emptied.status).toBe(200);
    expect(emptied.body).toEqual({
      pool: { id: expect.any(String), stablecoin: "USDC", available: "0.00", reserved: "0.00", headroom: "0.00", lowThreshold: "1000.00" },
      funded: 0,
      stillWaiting: 0,
    });

    const loan = await createdLoan(t, m.key);
    expect(loan).toMatchObject({ status: "CREATED", derivedStatus: "CREATED", fundingState: "AWAITING_LIQUIDITY", fundedAt: null, dueAt: null });
    expect(loan.decision.outcome).toBe("APPROVED");
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funding_failed", "liquidity.unavailable"]);

    // Not enough yet: retried, still waiting, and no second report.
    const partial = await setLiquidity(m.key, { available: "50.00" });
    expect(partial.body).toMatchObject({ funded: 1, stillWaiting: 1 });
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    expect(await typesOf(m.key, loan.id)).toHaveLength(4);

    const refilled = await setLiquidity(m.key, { available: "1000.00" });
    expect(refilled.status).toBe(200);
    expect(refilled.body).toEqual({
      pool: { id: emptied.body.pool.id, stablecoin: "USDC", available: "900.00", reserved: "0.00", headroom: "900.00", lowThreshold: "1000.00" },
      funded: 1,
      stillWaiting: 0,
    });
    expect(await getLoan(m.key, loan.id)).toMatchObject({ id: loan.id, status: "ACTIVE", fundingState: "FUNDED", fundedAt: expect.any(String) });
    expect((await typesOf(m.key, loan.id)).at(-1)).toBe("loan.funded");
    // Once funded, a later PUT retries nothing.
    expect((await setLiquidity(m.key, { available: "2000.00" })).body).toMatchObject({ funded: 0, stillWaiting: 0 });
  });

  test("waiting loans are funded oldest first while the headroom lasts", async () => {
    const m = await sandboxTenant(t);
    await setLiquidity(m.key, { available: "0.00" });
    const first = await createdLoan(t, m.key, { principalAmount: "60.00" });
    await advance(m.key, 1); // the test clock stands still: make "oldest" unambiguous
    const second = await createdLoan(t, m.key, { principalAmount: "60.00" });
    const res = await setLiquidity(m.key, { available: "100.00" });
    expect(res.body).toMatchObject({ funded: 2, stillWaiting: 1, pool: { available: "40.00", headroom: "40.00" } });
    expect((await getLoan(m.key, first.id)).status).toBe("ACTIVE");
    expect((await getLoan(m.key, second.id)).fundingState).toBe("AWAITING_LIQUIDITY");
  });

  test("liquidity.low fires once when headroom falls under the threshold, and again only after a top-up re-arms it", async () => {
    const m = await sandboxTenant(t);
    const set = await setLiquidity(m.key, { available: "1000.00", lowThreshold: "850.00" });
    expect(set.body.pool).toMatchObject({ available: "1000.00", headroom: "1000.00", lowThreshold: "850.00" });
    await createdLoan(t, m.key); // headroom 900: not under 850
    expect(await eventsOfType(m.key, "liquidity.low")).toEqual([]);
    const crossing = await createdLoan(t, m.key); // 800: under
    await createdLoan(t, m.key); // 700: still the same dip
    let lows = await eventsOfType(m.key, "liquidity.low");
    expect(lows).toHaveLength(1);
    expect(lows[0]).toMatchObject({
      type: "liquidity.low",
      tenantId: m.tenantId,
      program: null,
      channel: null,
      data: { loanId: crossing.id, pool: { lowThreshold: "850.00", headroom: "800.00" } },
    });

    // Topped up at or above the threshold: re-armed, no event.
    await setLiquidity(m.key, { available: "900.00" });
    expect(await eventsOfType(m.key, "liquidity.low")).toHaveLength(1);
    await createdLoan(t, m.key); // 800 again: a new dip
    lows = await eventsOfType(m.key, "liquidity.low");
    expect(lows).toHaveLength(2);
  });

  test("a PUT that takes headroom under the threshold fires liquidity.low itself, once per dip", async () => {
    const m = await sandboxTenant(t);
    await setLiquidity(m.key, { available: "500.00" });
    await setLiquidity(m.key, { available: "400.00" });
    const lows = await eventsOfType(m.key, "liquidity.low");
    expect(lows).toHaveLength(1);
    expect(lows[0].data).toEqual({ loanId: null, pool: expect.objectContaining({ available: "500.00", headroom: "500.00", lowThreshold: "1000.00" }) });
    // Raising the threshold above the headroom is a dip too, but this one already fired.
    await setLiquidity(m.key, { available: "400.00", lowThreshold: "2000.00" });
    expect(await eventsOfType(m.key, "liquidity.low")).toHaveLength(1);
  });

  test("available may not fall under what is reserved (400 naming available)", async () => {
    const m = await sandboxTenant(t);
    const pool = (await setLiquidity(m.key, { available: "1000.00" })).body.pool;
    // A reservation exists only while a loan is being funded; made directly here.
    await t.db.update(liquidityPools).set({ reserved: 50_000_000n }).where(eq(liquidityPools.id, pool.id));
    const res = await setLiquidity(m.key, { available: "49.99" });
    expectFieldErrors(res, "available");
    expect(res.body.message).toEqual(["available: must be at least 50.00, the amount reserved for loans being funded"]);
    const [row] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.id, pool.id));
    expect(row!.available).toBe(1_000_000_000n);
    const exact = await setLiquidity(m.key, { available: "50.00" });
    expect(exact.body.pool).toMatchObject({ available: "50.00", reserved: "50.00", headroom: "0.00" });
  });

  test("another stablecoin gets its own pool, created once; the USDC pool is untouched", async () => {
    const m = await sandboxTenant(t);
    const usdt = await setLiquidity(m.key, { available: "10.00", stablecoin: "USDT", lowThreshold: "1.00" });
    expect(usdt.body.pool).toMatchObject({ stablecoin: "USDT", available: "10.00", lowThreshold: "1.00" });
    const again = await Promise.all([
      setLiquidity(m.key, { available: "20.00", stablecoin: "USDT" }),
      setLiquidity(m.key, { available: "30.00", stablecoin: "USDT" }),
    ]);
    expect(again.map((r) => r.body.pool.id)).toEqual([usdt.body.pool.id, usdt.body.pool.id]);
    const pools = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
    expect(pools.map((p) => [p.stablecoin, p.available]).sort()).toEqual([
      ["USDC", 100_000_000_000n],
      ["USDT", expect.any(BigInt)],
    ]);
  });

  test("a tenant without a pool of that stablecoin gets one created", async () => {
    const m = await sandboxTenant(t);
    await t.db.delete(liquidityPools).where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.stablecoin, "USDC")));
    const res = await setLiquidity(m.key, { available: "500.00" });
    expect(res.status).toBe(200);
    expect(res.body.pool).toMatchObject({ stablecoin: "USDC", available: "500.00", lowThreshold: "1000.00" });
    expect((await createdLoan(t, m.key)).status).toBe("ACTIVE");
  });

  describe("errors", () => {
    let key: string;
    beforeAll(async () => {
      key = (await sandboxTenant(t)).key;
    });

    test.each([
      ["available missing", {}, "available"],
      ["available as a number", { available: 100 }, "available"],
      ["available negative", { available: "-1.00" }, "available"],
      ["available with 3 decimals", { available: "1.234" }, "available"],
      ["available huge", { available: "12345678901234567890" }, "available"],
      ["available above the bound", { available: "1000000000.01" }, "available"],
      ["an unknown stablecoin", { available: "1.00", stablecoin: "DAI" }, "stablecoin"],
      ["a lowThreshold that is no amount", { available: "1.00", lowThreshold: "lots" }, "lowThreshold"],
      ["a null lowThreshold", { available: "1.00", lowThreshold: null }, "lowThreshold"],
    ])("%s", async (_name, body, field) => {
      const res = await setLiquidity(key, body);
      expectFieldErrors(res, field);
      expect(res.body.message).toHaveLength(1);
    });
  });
});

describe("sandbox: security", () => {
  const CALLS = [
    ["GET", "/v1/sandbox/clock", undefined],
    ["POST", "/v1/sandbox/clock/advance", { seconds: 60 }],
    ["PUT", "/v1/sandbox/liquidity", { available: "10.00" }],
  ] as const;

  test.each(CALLS)("%s %s without a key: 401; with a dashboard session: 401", async (method, path, body) => {
    const m = await sandboxTenant(t);
    expect((await t.request(method, path, { body })).status).toBe(401);
    expect((await t.request(method, path, { body, headers: bearer(m.token) })).status).toBe(401);
  });

  // The sandbox clock runs only sandbox loans (live loans are on the system clock), so a certified tenant's sandbox key keeps it.
  test.each(CALLS.filter(([, path]) => path.startsWith("/v1/sandbox/clock")))(
    "%s %s for a certified tenant's sandbox key: 200 on the sandbox clock",
    async (method, path, body) => {
      const m = await sandboxTenant(t);
      await t.db.update(tenants).set({ mode: "live", certifiedAt: new Date() }).where(eq(tenants.id, m.tenantId));
      const res = await t.request(method, path, { body, headers: apiKey(m.key) });
      expect(res.status).toBe(200);
      const [tenant] = await t.db.select().from(tenants).where(eq(tenants.id, m.tenantId));
      expect(tenant!.clockOffsetMs).toBe(method === "POST" ? 60_000 : 0);
      expect(new Date(res.body.now).getTime() - t.clock.now().getTime()).toBe(tenant!.clockOffsetMs);
    },
  );

  test("a certified tenant keeps its sandbox: its sandbox key sets the sandbox pool (never a live one); a live key gets 403", async () => {
    const m = await sandboxTenant(t);
    await t.db.update(tenants).set({ mode: "live", certifiedAt: new Date() }).where(eq(tenants.id, m.tenantId));
    const res = await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "10.00" }, headers: apiKey(m.key) });
    expect(res.status).toBe(200);
    const pools = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
    expect(pools.every((p) => p.mode === "sandbox")).toBe(true);
    expect(pools.find((p) => p.stablecoin === "USDC")!.available).toBe(10_000_000n);
    const live = await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(m.token) });
    const refused = await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "20.00" }, headers: apiKey(live.body.key) });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      statusCode: 403,
      message: "Sandbox helpers are for sandbox API keys (svc_test_…) only; this is a live key",
      error: "Forbidden",
    });
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
