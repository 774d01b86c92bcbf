import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainConfig } from "../../../../shared/chains/chain-config.ts";

const SIMULATED_POOL_ADDRESS = chainConfig("POLYGON_AMOY").fundingSource;
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const history = (key: string, loanId: string) => t.request("GET", `/v1/settlements/${loanId}`, { headers: apiKey(key) });

describe("settlements", () => {
  test("a funded loan has one CONFIRMED FUNDING row of the principal, with the loan's fundingTxHash", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key, { principalAmount: "123.45" });
    const res = await history(m.key, loan.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      loanId: loan.id,
      data: [
        {
          id: expect.any(String),
          kind: "FUNDING",
          status: "CONFIRMED",
          amount: "123.45",
          chain: "POLYGON_AMOY",
          asset: "USDC",
          txHash: loan.fundingTxHash,
          blockNumber: expect.any(Number),
          from: SIMULATED_POOL_ADDRESS,
          to: loan.borrowerWalletAddress,
          createdAt: loan.fundedAt,
        },
      ],
    });
    expect(loan.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  test("a loan without money movements (declined, waiting for liquidity) has an empty history", async () => {
    const m = await sandboxTenant(t);
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.key) })).status).toBe(200);
    const declined = await createdLoan(t, m.key);
    expect(declined.derivedStatus).toBe("DECLINED");
    expect((await history(m.key, declined.id)).body).toEqual({ loanId: declined.id, data: [] });
    await t.request("PUT", "/v1/policies", { body: { ...policy, requireKycVerified: false }, headers: apiKey(m.key) });

    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: apiKey(m.key) });
    const waiting = await createdLoan(t, m.key);
    expect(waiting.fundingState).toBe("AWAITING_LIQUIDITY");
    expect((await history(m.key, waiting.id)).body).toEqual({ loanId: waiting.id, data: [] });
    // Funded later: one row, on the loan's fundingTxHash.
    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "500.00" }, headers: apiKey(m.key) });
    const funded = (await t.request("GET", `/v1/loans/${waiting.id}`, { headers: apiKey(m.key) })).body;
    const rows = (await history(m.key, waiting.id)).body.data;
    expect(rows).toEqual([expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", txHash: funded.fundingTxHash })]);
  });

  test("an unknown loan id, or one that is no UUID: 404", async () => {
    const m = await sandboxTenant(t);
    for (const id of [crypto.randomUUID(), "not-a-loan"]) {
      const res = await history(m.key, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Loan not found", error: "Not Found" });
    }
  });

  test("a loanId longer than 64 characters: 400 naming loanId", async () => {
    const m = await sandboxTenant(t);
    const res = await history(m.key, "x".repeat(65));
    expect(res.status).toBe(400);
    expect(res.body.message[0]).toStartWith("loanId: ");
  });

  test("another tenant's loan: 404", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const loan = await createdLoan(t, a.key);
    expect((await history(b.key, loan.id)).status).toBe(404);
    expect((await history(a.key, loan.id)).body.data).toHaveLength(1);
  });

  test("no key, or a dashboard session: 401", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    expect((await t.request("GET", `/v1/settlements/${loan.id}`)).status).toBe(401);
    expect((await t.request("GET", `/v1/settlements/${loan.id}`, { headers: bearer(m.token) })).status).toBe(401);
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
