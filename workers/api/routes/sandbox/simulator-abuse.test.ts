import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { encodeFunctionData, erc20Abi, getAddress, maxUint256 } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { SVC_POOL_ABI } from "../../../../shared/chains/evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../../../../shared/chains/loan-id.ts";
import { MAX_STORABLE_UNITS } from "../../../../shared/domain/money.ts";
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";
import { signAsBorrower } from "../../../../shared/testing/sign-as-borrower.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "../../openapi-examples.ts";

/**
 * Attacks on the simulated chains and the settlement they drive, each found
 * by an audit and failing before its fix: the faucet minting into the
 * platform's own wallets, a payment too large to store being attributable,
 * the sandbox clock pushed past the last writable date.
 */

const POLYGON = CHAIN_CONFIG.POLYGON_AMOY;
const POOL = getAddress(POLYGON.pool!);
const TOKEN = getAddress(POLYGON.token.address);
const TON = CHAIN_CONFIG.TON_TESTNET;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Merchant = Awaited<ReturnType<typeof sandboxTenant>>;
const newTon = () => `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
const faucet = (m: Merchant, chain: string, address: string, amount: string) =>
  t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain, address, amount }, headers: apiKey(m.key) });
const unmatched = async (m: Merchant) => (await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data as any[];
const attribute = (m: Merchant, id: string, loanId: string) =>
  t.request("POST", `/v1/settlements/unmatched/${id}/attribute`, { body: { loanId }, headers: bearer(m.token) });
const expect4xx = (res: { status: number; body: any }) => {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.body).toMatchObject({ statusCode: res.status, message: expect.anything(), error: expect.any(String) });
};

describe("the faucet gives test stablecoin to wallets only, never the platform's (a mint into the pool read as a payment, attributable to a loan no wallet paid)", () => {
  test("EVM: faucet to the pool is refused (as the transfers helper refuses the platform's wallets), and the pool's balance does not move", async () => {
    const m = await sandboxTenant(t, "Minter");
    const before = await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(POOL);
    const res = await faucet(m, "POLYGON_AMOY", POOL, "1000000");
    expect4xx(res);
    expect(res.status).toBe(403);
    expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(POOL)).toBe(before);
  });

  test("EVM: a faucet mint into the pool is no payment: it cannot be attributed to make a loan REPAID (no wallet paid anything)", async () => {
    const m = await sandboxTenant(t, "Minter 2");
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    expect((await faucet(m, "POLYGON_AMOY", POOL, "102.00")).status).toBe(403);
    const minted = (await unmatched(m)).find((u) => u.from === "0x0000000000000000000000000000000000000000");
    if (minted) {
      const res = await attribute(m, minted.id, loan.id);
      expect(res.status).toBe(409);
    }
    const after = await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) });
    expect(after.body).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    // The borrower's wallet never moved a unit.
    expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(borrower.address)).toBe(100_000_000n);
  });

  test("TON: faucet to the platform's settlement wallet is refused and no attributable payment appears", async () => {
    const m = await sandboxTenant(t, "Ton Minter");
    const config = await t.request("POST", "/v1/merchant-configs", {
      body: { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" },
      headers: bearer(m.token),
    });
    expect(config.status).toBe(201);
    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00", stablecoin: "USDT" }, headers: apiKey(m.key) });
    const loan = await createdLoan(t, m.key, {
      loanProductId: config.body.loanProductId,
      chain: "TON_TESTNET",
      borrowerWalletAddress: newTon(),
      tenureDays: 3,
    });
    const res = await faucet(m, "TON_TESTNET", TON.settlementWallet!, "102.00");
    expect4xx(res);
    expect(res.status).toBe(403);
    const minted = (await unmatched(m)).find((u) => u.from === TON.token.address);
    expect(minted).toBeUndefined();
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body).toMatchObject({ status: "ACTIVE" });
  });
});

describe("a repayment above MAX_STORABLE_UNITS is kept as 0.00 and is not attributable (an attribution spent the record and credited nothing)", () => {
  test("a Repaid naming the loan for more than 2^53-1 units: the loan is not silently left unpaid by an attribution that answers 200", async () => {
    const m = await sandboxTenant(t, "Whale");
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    // Through the API this balance takes 9,008 faucet calls of 1,000,000 (the per-call cap); the test mints it on the ledger directly.
    const big = MAX_STORABLE_UNITS + 1n;
    await t.simChains.chain("POLYGON_AMOY", m.tenantId).faucet({ address: borrower.address, amount: big - 100_000_000n });
    let nonce = 0;
    const send = async (to: string, data: `0x${string}`) =>
      (
        await t.request("POST", "/v1/sandbox/chain/transactions", {
          body: { chain: "POLYGON_AMOY", signedTransaction: await signAsBorrower(borrower, POLYGON.chainId!, nonce++, { to, data }) },
          headers: apiKey(m.key),
        })
      ).body;
    expect(await send(TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [POOL, maxUint256] }))).toMatchObject({ status: "success" });
    const paid = await send(POOL, encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loan.id), POOL, big] }));
    expect(paid).toMatchObject({ status: "success" });
    // The ledger: the borrower's whole balance is in the pool.
    expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(borrower.address)).toBe(0n);
    const kept = (await unmatched(m)).find((u) => u.txHash === paid.txHash)!;
    expect(kept).toMatchObject({ amount: "0.00", reason: "the amount is more than can be stored" });
    const res = await attribute(m, kept.id, loan.id);
    expect(kept.settles).toBe(false);
    expect(res.status).toBe(409);
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
  });
});

describe("the sandbox clock never passes 9999-12-31 (past the last writable date the clock routes answered 500)", () => {
  test("advance and read the clock near the end of time: a 4xx, never a 500", async () => {
    const m = await sandboxTenant(t, "Time Traveller");
    // Reachable through the API with ~250,000 advances of 400 days (concurrent ones add up); set directly here.
    await t.db
      .update(tenants)
      .set({ clockOffsetMs: 8.64e15 - Date.now() - 10 * 86_400_000 })
      .where(eq(tenants.id, m.tenantId));
    const advanced = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 400 * 86_400 }, headers: apiKey(m.key) });
    expect4xx(advanced);
    expect(advanced.status).toBe(409);
    const read = await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.key) });
    expect(read.status).toBe(200);
    const minted = await faucet(m, "POLYGON_AMOY", privateKeyToAccount(generatePrivateKey()).address, "1.00");
    if (minted.status === 400) expect(minted.body.message.some((l: string) => l.startsWith("address: at "))).toBe(false);
  });
});

test("no request in this file answered 500", () => {
  expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
});
