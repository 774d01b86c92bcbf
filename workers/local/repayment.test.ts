import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { encodeFunctionData, erc20Abi, getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../shared/chains/chain-config.ts";
import { loanIdToBytes32 } from "../../shared/chains/loan-id.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Repayment over HTTP against the bundled workers on workerd (issue 5): the
 * simulated chains as Durable Objects, the loan writer, the sandbox helpers
 * that answer after the settlement listener, the embed worker's repayment
 * instructions, and the cron worker's listener run twice at once. One stack;
 * every test signs up its own tenant.
 */
describe("repayment on workerd", () => {
  let stack: TestStack;
  let n = 0;
  const UNITS = 1_000_000;
  const POLYGON = CHAIN_CONFIG.POLYGON_AMOY;
  const TON = CHAIN_CONFIG.TON_TESTNET;
  const TON_SETTLEMENT_WALLET = Address.parse(TON.settlementWallet!).toString({ urlSafe: true, bounceable: false, testOnly: true });

  beforeAll(async () => {
    stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } } });
  }, 60_000);
  afterAll(() => stack?.dispose());

  type Merchant = Awaited<ReturnType<typeof newMerchant>>;

  /** Signup → API key → /v1/me (workers/local/integration.ts). */
  const newMerchant = () => signUpMerchant(stack, "Lender");

  async function createLoan(m: Merchant, overrides: Record<string, unknown>) {
    const res = await m.api("/v1/loans", {
      json: {
        loanProductId: m.loanProductId,
        borrowerRef: `borrower-${++n}`,
        chain: "POLYGON_AMOY",
        principalAmount: "100.00",
        idempotencyKey: `order-${crypto.randomUUID()}`,
        tenureDays: 7,
        ...overrides,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "ACTIVE", totalDue: "102.00" });
    return res.body;
  }

  async function post(m: Merchant, path: string, json: unknown) {
    const res = await m.api(path, { method: "POST", json });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  const typesOf = async (m: Merchant, loanId: string) => {
    const res = await m.api(`/v1/events?loanId=${loanId}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.data as any[]).map((e) => e.type as string).reverse();
  };
  const settlementsOf = async (m: Merchant, loanId: string): Promise<any[]> => {
    const res = await m.api(`/v1/settlements/${loanId}`);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const loanOf = async (m: Merchant, loanId: string) => (await m.api(`/v1/loans/${loanId}`)).body;
  const embedInstructions = (m: Merchant, loanId: string) => stack.fetch(`/v1/embed/${m.embedKey}/loans/${loanId}/repayment-instructions`);

  /** The tenant's pool of `stablecoin` straight from D1, in base units. */
  async function poolAvailable(tenantId: string, stablecoin: "USDC" | "USDT") {
    const db = await stack.db();
    const row = await db
      .prepare("SELECT available_units AS available FROM liquidity_pools WHERE tenant_id = ? AND stablecoin = ?")
      .bind(tenantId, stablecoin)
      .first<{ available: number }>();
    return row!.available;
  }

  /** Signs as the borrower's wallet: the instructions' transaction as is, EIP-1559 with the chain id. */
  const sign = (account: PrivateKeyAccount, chainId: number, nonce: number, tx: { to: string; data: string }) =>
    account.signTransaction({ chainId, nonce, to: tx.to as Hex, data: tx.data as Hex, value: 0n, gas: 200_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, type: "eip1559" });

  /** An ACTIVE POLYGON_AMOY loan repaid by its borrower's viem account through the API; returns the repay transaction. */
  async function repayOnPolygon(m: Merchant) {
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createLoan(m, { borrowerWalletAddress: borrower.address });
    await post(m, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" });
    const instructions = await post(m, `/v1/loans/${loan.id}/repay`, undefined);
    const submitted = [];
    for (const [nonce, tx] of (instructions.transactions as { to: string; data: string }[]).entries()) {
      submitted.push(await post(m, "/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction: await sign(borrower, POLYGON.chainId!, nonce, tx) }));
    }
    return { loan, borrower, instructions, approve: submitted[0], repay: submitted[1] };
  }

  test("EVM on POLYGON_AMOY: the borrower signs approve and repay; REPAID, loan.repaid, FUNDING then REPAYMENT; the embed route serves the same instructions", async () => {
    const m = await newMerchant();
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createLoan(m, { borrowerWalletAddress: borrower.address });
    await post(m, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" });
    const poolBefore = await poolAvailable(m.tenantId, "USDC");

    const repay = await m.api(`/v1/loans/${loan.id}/repay`, { method: "POST" });
    expect(repay.status).toBe(200);
    const instructions = repay.body;
    const pool = getAddress(POLYGON.pool!);
    expect(instructions).toMatchObject({
      chain: "POLYGON_AMOY",
      supported: true,
      chainId: 80002,
      token: { address: getAddress(POLYGON.token.address), symbol: "USDC", decimals: 6 },
      spender: pool,
      amount: "102.00",
      amountUnits: "102000000",
      loanIdBytes32: loanIdToBytes32(loan.id),
    });
    expect(instructions.transactions.map((tx: any) => tx.to)).toEqual([getAddress(POLYGON.token.address), pool]);
    // The embed worker serves the same instructions for the loan.
    const embedded = await embedInstructions(m, loan.id);
    expect(embedded.status).toBe(200);
    expect(embedded.body).toEqual(instructions);

    const approve = await post(m, "/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction: await sign(borrower, 80002, 0, instructions.transactions[0]) });
    expect(approve).toMatchObject({ status: "success", from: borrower.address });
    const repaid = await post(m, "/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction: await sign(borrower, 80002, 1, instructions.transactions[1]) });
    expect(repaid).toMatchObject({ status: "success", from: borrower.address });

    // Applied before the helper answered.
    expect(await loanOf(m, loan.id)).toMatchObject({ id: loan.id, status: "REPAID", amountPaid: "102.000000", amountDue: "0.000000", surplus: "0.000000" });
    expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    const events = await m.api(`/v1/events?loanId=${loan.id}&type=loan.repaid`);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data.loan).toMatchObject({ id: loan.id, status: "REPAID" });
    expect(await settlementsOf(m, loan.id)).toEqual([
      expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", txHash: loan.fundingTxHash }),
      expect.objectContaining({ kind: "REPAYMENT", status: "CONFIRMED", amount: "102.00", txHash: repaid.txHash, from: borrower.address, to: pool }),
    ]);
    expect((await poolAvailable(m.tenantId, "USDC")) - poolBefore).toBe(102 * UNITS);
    // REPAID: no more instructions, from either worker.
    expect((await m.api(`/v1/loans/${loan.id}/repay`, { method: "POST" })).status).toBe(409);
    expect((await embedInstructions(m, loan.id)).status).toBe(409);
  });

  test("TON on TON_TESTNET: a wrong comment is kept as unmatched and the loan stays ACTIVE; the exact comment repays it; the embed route serves TON instructions", async () => {
    const m = await newMerchant();
    const config = await m.dashboard("/v1/merchant-configs", {
      json: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3, 7, 15],
        minTicket: "10.00",
        maxTicket: "1000.00",
        gracePeriodDays: 3,
        processingFee: { type: "PERCENTAGE", value: "2.00" },
        lateFee: { type: "FIXED", value: "1.00" },
      },
    });
    expect(config.status).toBe(201);
    expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "100000.00", stablecoin: "USDT" } })).status).toBe(200);
    const borrower = `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    const loan = await createLoan(m, { loanProductId: config.body.loanProductId, chain: "TON_TESTNET", borrowerWalletAddress: borrower });
    expect(loan).toMatchObject({ chain: "TON_TESTNET", stablecoin: "USDT" });
    // Enough for the stray transfer and the repayment.
    await post(m, "/v1/sandbox/chain/faucet", { chain: "TON_TESTNET", address: borrower, amount: "110.00" });
    const poolBefore = await poolAvailable(m.tenantId, "USDT");

    const instructions = await post(m, `/v1/loans/${loan.id}/repay`, undefined);
    expect(instructions).toEqual({
      chain: "TON_TESTNET",
      supported: true,
      to: TON_SETTLEMENT_WALLET,
      asset: "USDT",
      amount: "102.000000",
      amountUnits: "102000000",
      comment: `svc:repay:${loan.id}`,
      jettonMaster: Address.parse(TON.token.address).toString({ urlSafe: true, bounceable: true, testOnly: true }),
      links: { ton: expect.stringMatching(/^ton:\/\/transfer\//), tonkeeper: expect.any(String) },
    });
    // The default widget program lends on POLYGON, yet its key serves any loan of the tenant.
    const embedded = await embedInstructions(m, loan.id);
    expect(embedded.status).toBe(200);
    expect(embedded.body).toEqual(instructions);

    const wrong = await post(m, "/v1/sandbox/chain/transfers", { chain: "TON_TESTNET", from: borrower, to: instructions.to, amount: instructions.amount, comment: `repay ${loan.id}` });
    expect(wrong.status).toBe("success");
    expect(await loanOf(m, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.000000" });
    const unmatched = await m.api("/v1/settlements/unmatched");
    expect(unmatched.status).toBe(200);
    expect(unmatched.body.data).toEqual([
      expect.objectContaining({ txHash: wrong.txHash, chain: "TON_TESTNET", amount: "102.000000", comment: `repay ${loan.id}`, claimedLoanId: null, attributedLoanId: null }),
    ]);

    const paid = await post(m, "/v1/sandbox/chain/transfers", { chain: "TON_TESTNET", from: borrower, to: instructions.to, amount: instructions.amount, comment: instructions.comment });
    expect(paid.status).toBe("success");

    expect(await loanOf(m, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.000000", surplus: "0.000000" });
    expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    expect((await settlementsOf(m, loan.id)).map((s) => [s.kind, s.status, s.amount, s.txHash])).toEqual([
      ["FUNDING", "CONFIRMED", "100.00", loan.fundingTxHash],
      ["REPAYMENT", "CONFIRMED", "102.00", paid.txHash],
    ]);
    expect((await poolAvailable(m.tenantId, "USDT")) - poolBefore).toBe(102 * UNITS);
  });

  test("attack replay: one unmatched payment attributed to two loans at once (two LoanObjects in parallel) credits one loan, the other gets 409 and nothing moves", async () => {
    const m = await newMerchant();
    // A few rounds: over HTTP the interleaving is up to workerd, each round is another chance at the race.
    for (let round = 0; round < 4; round++) {
      const borrower = privateKeyToAccount(generatePrivateKey());
      const loans = [await createLoan(m, { borrowerWalletAddress: borrower.address }), await createLoan(m, { borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address })];
      await post(m, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" });
      // 102.00 straight to the pool with the token's transfer (no repay, no loan named): kept as unmatched.
      const stray = await post(m, "/v1/sandbox/chain/transactions", {
        chain: "POLYGON_AMOY",
        signedTransaction: await sign(borrower, POLYGON.chainId!, 0, {
          to: getAddress(POLYGON.token.address),
          data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(POLYGON.pool!), 102n * BigInt(UNITS)] }),
        }),
      });
      expect(stray.status).toBe("success");
      const kept = ((await m.api("/v1/settlements/unmatched?limit=100")).body.data as any[]).find((u) => u.txHash === stray.txHash);
      expect(kept).toMatchObject({ amount: "102.000000", attributedLoanId: null });
      const poolBefore = await poolAvailable(m.tenantId, "USDC");

      const answers = await Promise.all(loans.map((loan) => m.dashboard(`/v1/settlements/unmatched/${kept.id}/attribute`, { method: "POST", json: { loanId: loan.id } })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const winner = answers.findIndex((a) => a.status === 200);
      expect(answers[1 - winner]!.body).toMatchObject({ statusCode: 409, error: "Conflict" });
      const [won, lost] = [loans[winner], loans[1 - winner]];
      expect(await loanOf(m, won.id)).toMatchObject({ status: "REPAID", amountPaid: "102.000000" });
      expect(await loanOf(m, lost.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.000000", repaidAt: null });
      expect((await settlementsOf(m, lost.id)).map((s) => s.kind)).toEqual(["FUNDING"]);
      expect((await settlementsOf(m, won.id)).map((s) => s.kind)).toEqual(["FUNDING", "REPAYMENT"]);
      expect((await typesOf(m, lost.id)).filter((x) => x === "loan.repaid")).toHaveLength(0);
      expect((await typesOf(m, won.id)).filter((x) => x === "loan.repaid")).toHaveLength(1);
      expect((await poolAvailable(m.tenantId, "USDC")) - poolBefore).toBe(102 * UNITS);
    }
  });

  test("two overlapping listener runs (cron scheduled() twice at once) over a repayment create no duplicate", async () => {
    const m = await newMerchant();
    const poolBefore = await poolAvailable(m.tenantId, "USDC");
    const { loan, repay } = await repayOnPolygon(m);
    expect((await loanOf(m, loan.id)).status).toBe("REPAID");

    // Rewind every chain's cursor: both runs replay the repayment.
    const db = await stack.db();
    await db.prepare("UPDATE chain_cursors SET last_block = 0").run();
    const runs = await Promise.all([stack.scheduled(), stack.scheduled()]);
    expect(runs.map((r) => r.outcome)).toEqual(["ok", "ok"]);
    const cursor = await db.prepare("SELECT last_block AS lastBlock FROM chain_cursors WHERE chain = 'POLYGON_AMOY'").first<{ lastBlock: number }>();
    expect(cursor!.lastBlock).toBeGreaterThanOrEqual(repay.blockNumber);

    expect(await loanOf(m, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.000000", surplus: "0.000000" });
    expect((await settlementsOf(m, loan.id)).map((s) => [s.kind, s.txHash])).toEqual([
      ["FUNDING", loan.fundingTxHash],
      ["REPAYMENT", repay.txHash],
    ]);
    expect((await typesOf(m, loan.id)).filter((x) => x === "loan.repaid")).toHaveLength(1);
    // Funding took the principal, the repayment brought back the total due: +2.00 net, once.
    expect((await poolAvailable(m.tenantId, "USDC")) - poolBefore).toBe(2 * UNITS);
    expect((await m.api("/v1/settlements/unmatched")).body.data).toEqual([]);
  });
});
