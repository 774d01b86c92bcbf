import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { encodeFunctionData, erc20Abi, getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { chainConfig } from "../../../../shared/chains/chain-config.ts";
import type { LoanWriter } from "../../../../shared/loans/loan-commands.ts";

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
          mode: "sandbox",
          status: "CONFIRMED",
          amount: "123.45",
          chain: "POLYGON_AMOY",
          asset: "USDC",
          txHash: loan.fundingTxHash,
          blockNumber: expect.any(Number),
          from: SIMULATED_POOL_ADDRESS,
          to: loan.borrowerWalletAddress,
          // Funding: when it was sent, on the loan's clock.
          paidAt: loan.fundedAt,
          createdAt: loan.fundedAt,
        },
      ],
      nextCursor: null,
    });
    expect(loan.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  test("a loan without money movements (declined, waiting for liquidity) has an empty history", async () => {
    const m = await sandboxTenant(t);
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.key) })).status).toBe(200);
    const declined = await createdLoan(t, m.key);
    expect(declined.derivedStatus).toBe("DECLINED");
    // Nothing was lent, so nothing is owed: the price is shown, the amount due is zero.
    expect(declined).toMatchObject({ totalDue: "102.00", amountPaid: "0.00", amountDue: "0.00" });
    expect((await history(m.key, declined.id)).body).toEqual({ loanId: declined.id, data: [], nextCursor: null });
    await t.request("PUT", "/v1/policies", { body: { ...policy, requireKycVerified: false }, headers: apiKey(m.key) });

    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: apiKey(m.key) });
    const waiting = await createdLoan(t, m.key);
    expect(waiting.fundingState).toBe("AWAITING_LIQUIDITY");
    expect(waiting).toMatchObject({ totalDue: "102.00", amountDue: "0.00" });
    expect((await history(m.key, waiting.id)).body).toEqual({ loanId: waiting.id, data: [], nextCursor: null });
    // Funded later: one row, on the loan's fundingTxHash.
    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "500.00" }, headers: apiKey(m.key) });
    const funded = (await t.request("GET", `/v1/loans/${waiting.id}`, { headers: apiKey(m.key) })).body;
    expect(funded).toMatchObject({ status: "ACTIVE", totalDue: "102.00", amountDue: "102.00" });
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

  test("no credentials: 401; a dashboard session reads it (the loan's page)", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    expect((await t.request("GET", `/v1/settlements/${loan.id}`)).status).toBe(401);
    const bySession = await t.request("GET", `/v1/settlements/${loan.id}`, { headers: bearer(m.token) });
    expect(bySession.status).toBe(200);
    expect(bySession.body.data).toHaveLength(1);
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});

describe("attributing an unmatched payment", () => {
  const POLYGON = chainConfig("POLYGON_AMOY");
  const UNITS = 1_000_000n;

  /** 102.00 USDC sent straight to the pool by the borrower (a token transfer, no `repay`: no loan named), kept as unmatched. */
  async function strayPayment(key: string, borrower: PrivateKeyAccount) {
    expect(
      (
        await t.request("POST", "/v1/sandbox/chain/faucet", {
          body: { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" },
          headers: apiKey(key),
        })
      ).status,
    ).toBe(200);
    const signedTransaction = await borrower.signTransaction({
      chainId: POLYGON.chainId!,
      nonce: 0,
      to: getAddress(POLYGON.token.address),
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(POLYGON.pool!), 102n * UNITS] }),
      value: 0n,
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      type: "eip1559",
    });
    const sent = await t.request("POST", "/v1/sandbox/chain/transactions", {
      body: { chain: "POLYGON_AMOY", signedTransaction: signedTransaction as Hex },
      headers: apiKey(key),
    });
    expect(sent.body).toMatchObject({ status: "success" });
    const kept = (await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(key) })).body.data.filter(
      (u: any) => u.txHash === sent.body.txHash,
    );
    expect(kept).toEqual([expect.objectContaining({ amount: "102.00", claimedLoanId: null, attributedLoanId: null })]);
    return kept[0];
  }

  const poolAvailable = async (tenantId: string) =>
    (
      await t.db
        .select()
        .from(liquidityPools)
        .where(and(eq(liquidityPools.tenantId, tenantId), eq(liquidityPools.stablecoin, "USDC")))
    )[0]!.available;
  const repaidEvents = async (key: string, loanId: string) =>
    (await t.request("GET", `/v1/events?loanId=${loanId}&type=loan.repaid`, { headers: apiKey(key) })).body.data;

  /**
   * The in-process writer serializes commands per loan only: two loans' commands run
   * interleaved, as two LoanObjects do. This one also holds each command until
   * `parties` have arrived, so both attributions are past every check before
   * either commits: the race is run every time, not by luck of timing.
   */
  function meetingWriter(inner: LoanWriter, parties: number): LoanWriter {
    let arrived = 0;
    let release!: () => void;
    const met = new Promise<void>((resolve) => (release = resolve));
    return {
      run: async (cmd) => {
        if (++arrived === parties) release();
        await met;
        return inner.run(cmd);
      },
    };
  }

  test("two concurrent attributions of one payment to two loans: one 200, one 409; one loan REPAID, the pool credited once, one loan.repaid", async () => {
    const m = await sandboxTenant(t);
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loans = [await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address }), await createdLoan(t, m.key)];
    const kept = await strayPayment(m.key, borrower);
    const poolBefore = await poolAvailable(m.tenantId);

    const writer = t.deps.writer;
    t.deps.writer = meetingWriter(writer, 2);
    const answers = await Promise.all(
      loans.map((loan) => t.request("POST", `/v1/settlements/unmatched/${kept.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(m.token) })),
    ).finally(() => (t.deps.writer = writer));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.findIndex((a) => a.status === 200);
    const [won, lost] = [loans[winner], loans[1 - winner]];
    expect(answers[1 - winner]!.body).toEqual({ statusCode: 409, message: "This payment was already attributed", error: "Conflict" });
    expect(answers[winner]!.body).toMatchObject({ unmatched: { id: kept.id, attributedLoanId: won.id }, loan: { id: won.id, status: "REPAID" } });

    const after = await Promise.all(loans.map(async (l) => (await t.request("GET", `/v1/loans/${l.id}`, { headers: apiKey(m.key) })).body));
    expect(after[winner]).toMatchObject({ status: "REPAID", amountPaid: "102.00" });
    expect(after[1 - winner]).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", amountDue: "102.00", repaidAt: null });
    // Newest first, as every list.
    expect((await history(m.key, won.id)).body.data.map((s: any) => s.kind)).toEqual(["REPAYMENT", "FUNDING"]);
    expect((await history(m.key, lost.id)).body.data.map((s: any) => s.kind)).toEqual(["FUNDING"]);
    expect(await repaidEvents(m.key, won.id)).toHaveLength(1);
    expect(await repaidEvents(m.key, lost.id)).toHaveLength(0);
    expect((await poolAvailable(m.tenantId)) - poolBefore).toBe(102n * UNITS);
    const [row] = (await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data.filter((u: any) => u.id === kept.id);
    expect(row).toMatchObject({ attributedLoanId: won.id, attributedBy: `user:${m.userId}` });

    // Once attributed, any further attribution is 409 too.
    const again = await t.request("POST", `/v1/settlements/unmatched/${kept.id}/attribute`, { body: { loanId: lost.id }, headers: bearer(m.token) });
    expect(again.body).toEqual({ statusCode: 409, message: "This payment was already attributed", error: "Conflict" });
  });

  test("five concurrent attributions of one payment to the same loan: one 200, four 409; credited once, one loan.repaid", async () => {
    const m = await sandboxTenant(t);
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    const kept = await strayPayment(m.key, borrower);
    const poolBefore = await poolAvailable(m.tenantId);

    // All five past every check before the first commits; the writer then runs them one after another,
    // so the four behind the winner find its credit already there (an audit saw them answer 200 as well).
    const writer = t.deps.writer;
    t.deps.writer = meetingWriter(writer, 5);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.request("POST", `/v1/settlements/unmatched/${kept.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(m.token) }),
      ),
    ).finally(() => (t.deps.writer = writer));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const lost of answers.filter((a) => a.status === 409))
      expect(lost.body).toEqual({ statusCode: 409, message: "This payment was already attributed", error: "Conflict" });
    expect(answers.find((a) => a.status === 200)!.body).toMatchObject({
      unmatched: { id: kept.id, attributedLoanId: loan.id },
      loan: { id: loan.id, status: "REPAID" },
    });
    expect((await history(m.key, loan.id)).body.data.map((s: any) => s.kind)).toEqual(["REPAYMENT", "FUNDING"]);
    expect(await repaidEvents(m.key, loan.id)).toHaveLength(1);
    expect((await poolAvailable(m.tenantId)) - poolBefore).toBe(102n * UNITS);
  });

  test("no request in this describe answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
