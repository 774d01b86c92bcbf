import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address } from "@ton/core";
import { encodeFunctionData, erc20Abi, getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../shared/chains/chain-config.ts";
import { SVC_POOL_ABI } from "../../shared/chains/evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../../shared/chains/loan-id.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "../api/openapi-examples.ts";
import { signAsBorrower } from "../../shared/testing/sign-as-borrower.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Repayment over HTTP against the bundled workers on workerd (issue 5): the
 * simulated chains as Durable Objects, the loan writer, the sandbox helpers
 * that answer after the settlement listener, and the cron worker's listener
 * run twice at once. One stack;
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
    const res = await m.api(`/v1/settlements/${loanId}?limit=100`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    // Newest first, as every list: oldest first here.
    return [...res.body.data].reverse();
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

  const sign = signAsBorrower;

  /** An ACTIVE POLYGON_AMOY loan repaid by its borrower's viem account through the API; returns the repay transaction. */
  async function repayOnPolygon(m: Merchant) {
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createLoan(m, { borrowerWalletAddress: borrower.address });
    await post(m, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: borrower.address, amount: "2.00" });
    const instructions = await post(m, `/v1/loans/${loan.id}/repay`, undefined);
    const submitted = [];
    for (const [nonce, tx] of (instructions.transactions as { to: string; data: string }[]).entries()) {
      submitted.push(
        await post(m, "/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction: await sign(borrower, POLYGON.chainId!, nonce, tx) }),
      );
    }
    return { loan, borrower, instructions, approve: submitted[0], repay: submitted[1] };
  }

  test("EVM on POLYGON_AMOY: the borrower signs approve and repay; REPAID, loan.repaid, FUNDING then REPAYMENT; the embed route refuses an API loan (404)", async () => {
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
    // An API loan is none of the widget program's: the embed worker answers 404 (its own loans: workers/local/embed-abuse.test.ts).
    expect((await embedInstructions(m, loan.id)).body).toEqual({ statusCode: 404, message: "Loan not found", error: "Not Found" });

    const approve = await post(m, "/v1/sandbox/chain/transactions", {
      chain: "POLYGON_AMOY",
      signedTransaction: await sign(borrower, 80002, 0, instructions.transactions[0]),
    });
    expect(approve).toMatchObject({ status: "success", from: borrower.address });
    const repaid = await post(m, "/v1/sandbox/chain/transactions", {
      chain: "POLYGON_AMOY",
      signedTransaction: await sign(borrower, 80002, 1, instructions.transactions[1]),
    });
    expect(repaid).toMatchObject({ status: "success", from: borrower.address });

    // Applied before the helper answered.
    expect(await loanOf(m, loan.id)).toMatchObject({ id: loan.id, status: "REPAID", amountPaid: "102.00", amountDue: "0.00", surplus: "0.00" });
    expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    const events = await m.api(`/v1/events?loanId=${loan.id}&type=loan.repaid`);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data.loan).toMatchObject({ id: loan.id, status: "REPAID" });
    expect(await settlementsOf(m, loan.id)).toEqual([
      expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", txHash: loan.fundingTxHash }),
      expect.objectContaining({ kind: "REPAYMENT", status: "CONFIRMED", amount: "102.00", txHash: repaid.txHash, from: borrower.address, to: pool }),
    ]);
    expect((await poolAvailable(m.tenantId, "USDC")) - poolBefore).toBe(102 * UNITS);
    // REPAID: no more instructions.
    expect((await m.api(`/v1/loans/${loan.id}/repay`, { method: "POST" })).status).toBe(409);
  });

  /** A TON/USDT configuration with its sandbox pool, and a funded TON_TESTNET loan to a fresh raw address. */
  async function tonLoanOf(m: Merchant) {
    const config = await m.dashboard("/v1/merchant-configs", {
      json: { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" },
    });
    expect(config.status).toBe(201);
    expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "100000.00", stablecoin: "USDT" } })).status).toBe(200);
    const borrower = `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    const loan = await createLoan(m, { loanProductId: config.body.loanProductId, chain: "TON_TESTNET", borrowerWalletAddress: borrower });
    return { borrower, loan };
  }

  test("TON on TON_TESTNET: a wrong comment is kept as unmatched and the loan stays ACTIVE; the exact comment repays it; the embed route refuses an API loan (404)", async () => {
    const m = await newMerchant();
    const { borrower, loan } = await tonLoanOf(m);
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
    // The default widget program's key serves only that program's loans.
    expect((await embedInstructions(m, loan.id)).status).toBe(404);

    const wrong = await post(m, "/v1/sandbox/chain/transfers", {
      chain: "TON_TESTNET",
      from: borrower,
      to: instructions.to,
      amount: instructions.amount,
      comment: `repay ${loan.id}`,
    });
    expect(wrong.status).toBe("success");
    expect(await loanOf(m, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    const unmatched = await m.api("/v1/settlements/unmatched");
    expect(unmatched.status).toBe(200);
    expect(unmatched.body.data).toEqual([
      expect.objectContaining({
        txHash: wrong.txHash,
        chain: "TON_TESTNET",
        amount: "102.00",
        comment: `repay ${loan.id}`,
        claimedLoanId: null,
        attributedLoanId: null,
      }),
    ]);

    const paid = await post(m, "/v1/sandbox/chain/transfers", {
      chain: "TON_TESTNET",
      from: borrower,
      to: instructions.to,
      amount: instructions.amount,
      comment: instructions.comment,
    });
    expect(paid.status).toBe("success");

    expect(await loanOf(m, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "0.00" });
    expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    expect((await settlementsOf(m, loan.id)).map((s) => [s.kind, s.status, s.amount, s.txHash])).toEqual([
      ["FUNDING", "CONFIRMED", "100.00", loan.fundingTxHash],
      ["REPAYMENT", "CONFIRMED", "102.00", paid.txHash],
    ]);
    expect((await poolAvailable(m.tenantId, "USDT")) - poolBefore).toBe(102 * UNITS);
  });

  test("attack replay: another tenant moves nothing of this tenant's or the platform's (per-tenant sandbox ledgers); Anvil's account #1 cannot collect", async () => {
    const a = await newMerchant();
    const { borrower: tonBorrower, loan: tonLoan } = await tonLoanOf(a);
    await post(a, "/v1/sandbox/chain/faucet", { chain: "TON_TESTNET", address: tonBorrower, amount: "10.00" });
    const evmBorrower = privateKeyToAccount(generatePrivateKey());
    const evmLoan = await createLoan(a, { borrowerWalletAddress: evmBorrower.address });

    const b = await newMerchant();
    const thief = `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    // A's borrower, and the platform's settlement wallet (in both of its forms), as `from`.
    const fromBorrower = await b.api("/v1/sandbox/chain/transfers", { json: { chain: "TON_TESTNET", from: tonBorrower, to: thief, amount: "50.00" } });
    expect(fromBorrower.status).toBe(400);
    expect(fromBorrower.body.message[0]).toStartWith("from: ");
    for (const from of [TON.settlementWallet!, TON_SETTLEMENT_WALLET]) {
      const fromPlatform = await b.api("/v1/sandbox/chain/transfers", { json: { chain: "TON_TESTNET", from, to: thief, amount: "1000.00" } });
      expect(fromPlatform.status).toBe(403);
      expect(fromPlatform.body).toMatchObject({ statusCode: 403, error: "Forbidden" });
    }
    // A transfer signed with A's EVM borrower's key, sent by B.
    const stolen = await b.api("/v1/sandbox/chain/transactions", {
      json: {
        chain: "POLYGON_AMOY",
        signedTransaction: await sign(evmBorrower, POLYGON.chainId!, 0, {
          to: getAddress(POLYGON.token.address),
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: "transfer",
            args: [getAddress(privateKeyToAccount(generatePrivateKey()).address), 100n * BigInt(UNITS)],
          }),
        }),
      },
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.message[0]).toStartWith("signedTransaction: ");
    // The pool's collect signed with Anvil's published account #1 (funded on B's ledger so that it runs): reverted.
    const anvil1 = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
    await post(b, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: anvil1.address, amount: "1.00" });
    const collect = await post(b, "/v1/sandbox/chain/transactions", {
      chain: "POLYGON_AMOY",
      signedTransaction: await sign(anvil1, POLYGON.chainId!, 0, {
        to: getAddress(POLYGON.pool!),
        data: encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "collect", args: [anvil1.address, 1_000_000n * BigInt(UNITS)] }),
      }),
    });
    expect(collect).toMatchObject({ status: "reverted", revertReason: "NotOperator()" });
    // Nothing reached the thief: it has nothing to send on B's ledger.
    expect((await b.api("/v1/sandbox/chain/transfers", { json: { chain: "TON_TESTNET", from: thief, to: tonBorrower, amount: "1.00" } })).status).toBe(400);

    // A's borrowers still hold every unit: the TON one repays 102.00 and sends its last 8.00 on; the EVM one repays 102.00.
    const tonInstructions = await post(a, `/v1/loans/${tonLoan.id}/repay`, undefined);
    expect(
      await post(a, "/v1/sandbox/chain/transfers", {
        chain: "TON_TESTNET",
        from: tonBorrower,
        to: tonInstructions.to,
        amount: "102.00",
        comment: tonInstructions.comment,
      }),
    ).toMatchObject({ status: "success" });
    expect(await post(a, "/v1/sandbox/chain/transfers", { chain: "TON_TESTNET", from: tonBorrower, to: thief, amount: "8.00" })).toMatchObject({
      status: "success",
    });
    expect(await post(a, "/v1/sandbox/chain/transfers", { chain: "TON_TESTNET", from: tonBorrower, to: thief, amount: "0.01" })).toMatchObject({
      status: "failed",
    });
    expect((await loanOf(a, tonLoan.id)).status).toBe("REPAID");
    await post(a, "/v1/sandbox/chain/faucet", { chain: "POLYGON_AMOY", address: evmBorrower.address, amount: "2.00" });
    const evmInstructions = await post(a, `/v1/loans/${evmLoan.id}/repay`, undefined);
    for (const [nonce, tx] of (evmInstructions.transactions as { to: string; data: string }[]).entries()) {
      expect(
        await post(a, "/v1/sandbox/chain/transactions", { chain: "POLYGON_AMOY", signedTransaction: await sign(evmBorrower, POLYGON.chainId!, nonce, tx) }),
      ).toMatchObject({ status: "success" });
    }
    expect((await loanOf(a, evmLoan.id)).status).toBe("REPAID");
    // The cron job's listener polls both tenants' ledgers without a hitch.
    expect((await stack.scheduled()).outcome).toBe("ok");
  });

  test("attack replay: one unmatched payment attributed to two loans at once (two LoanObjects in parallel) credits one loan, the other gets 409 and nothing moves", async () => {
    const m = await newMerchant();
    // A few rounds: over HTTP the interleaving is up to workerd, each round is another chance at the race.
    for (let round = 0; round < 4; round++) {
      const borrower = privateKeyToAccount(generatePrivateKey());
      const loans = [
        await createLoan(m, { borrowerWalletAddress: borrower.address }),
        await createLoan(m, { borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address }),
      ];
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
      expect(kept).toMatchObject({ amount: "102.00", attributedLoanId: null });
      const poolBefore = await poolAvailable(m.tenantId, "USDC");

      const answers = await Promise.all(
        loans.map((loan) => m.dashboard(`/v1/settlements/unmatched/${kept.id}/attribute`, { method: "POST", json: { loanId: loan.id } })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const winner = answers.findIndex((a) => a.status === 200);
      expect(answers[1 - winner]!.body).toMatchObject({ statusCode: 409, error: "Conflict" });
      const [won, lost] = [loans[winner], loans[1 - winner]];
      expect(await loanOf(m, won.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00" });
      expect(await loanOf(m, lost.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", repaidAt: null });
      expect((await settlementsOf(m, lost.id)).map((s) => s.kind)).toEqual(["FUNDING"]);
      expect((await settlementsOf(m, won.id)).map((s) => s.kind)).toEqual(["FUNDING", "REPAYMENT"]);
      expect((await typesOf(m, lost.id)).filter((x) => x === "loan.repaid")).toHaveLength(0);
      expect((await typesOf(m, won.id)).filter((x) => x === "loan.repaid")).toHaveLength(1);
      expect((await poolAvailable(m.tenantId, "USDC")) - poolBefore).toBe(102 * UNITS);
    }
  });

  test("after a sandbox clock advance, the ledger's Durable Object stamps a repayment with the tenant's time: paidAt and repaidAt on the sandbox clock, no late fee", async () => {
    const m = await newMerchant();
    const clock = async () => Date.parse((await m.api("/v1/sandbox/clock")).body.now);
    expect((await m.api("/v1/sandbox/clock/advance", { json: { seconds: 2 * 86_400 } })).status).toBe(200);
    const before = Math.floor((await clock()) / 1000) * 1000;
    const { loan } = await repayOnPolygon(m);
    const after = await clock();
    const repaid = await loanOf(m, loan.id);
    expect({ status: repaid.status, lateFee: repaid.lateFee, totalDue: repaid.totalDue }).toEqual({ status: "REPAID", lateFee: "0.00", totalDue: "102.00" });
    const rows = await settlementsOf(m, loan.id);
    expect(rows.map((r) => r.kind)).toEqual(["FUNDING", "REPAYMENT"]);
    expect(rows[0].paidAt).toBe(loan.fundedAt);
    // Two days ahead of the system clock: stamped with the tenant's time of the call, not the system's.
    const paidAt = Date.parse(rows[1].paidAt);
    expect(paidAt >= before && paidAt <= after).toBe(true);
    // Block times are whole seconds: a repayment in the second of the funding counts from the funding.
    expect(Date.parse(repaid.repaidAt)).toBe(Math.max(paidAt, Date.parse(loan.fundedAt)));
  });

  test("two overlapping listener runs (cron scheduled() twice at once) over a repayment create no duplicate", async () => {
    const m = await newMerchant();
    const poolBefore = await poolAvailable(m.tenantId, "USDC");
    const { loan, repay } = await repayOnPolygon(m);
    expect((await loanOf(m, loan.id)).status).toBe("REPAID");

    // Rewind the tenant's ledger cursor and make it due: both cron runs replay the repayment.
    const db = await stack.db();
    await db.prepare("UPDATE sandbox_ledgers SET last_block = 0, poll_after = 0 WHERE tenant_id = ?").bind(m.tenantId).run();
    const runs = await Promise.all([stack.scheduled(), stack.scheduled()]);
    expect(runs.map((r) => r.outcome)).toEqual(["ok", "ok"]);
    const cursor = await db
      .prepare("SELECT last_block AS lastBlock FROM sandbox_ledgers WHERE tenant_id = ? AND chain = 'POLYGON_AMOY'")
      .bind(m.tenantId)
      .first<{ lastBlock: number }>();
    expect(cursor!.lastBlock).toBeGreaterThanOrEqual(repay.blockNumber);

    expect(await loanOf(m, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "0.00" });
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
