import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signAsBorrower } from "../../../../shared/testing/sign-as-borrower.ts";
import { Address } from "@ton/core";
import { and, eq } from "drizzle-orm";
import { encodeAbiParameters, encodeEventTopics, encodeFunctionData, erc20Abi, getAddress, serializeTransaction, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { sandboxLedgers } from "../../../../db/schema/settlement-tracking.ts";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { SVC_POOL_ABI } from "../../../../shared/chains/evm/svc-pool-abi.ts";
import { loanIdToBytes32 } from "../../../../shared/chains/loan-id.ts";
import type { Chain } from "../../../../shared/domain/rails.ts";
import { classifyTransaction } from "../../../../shared/settlement/classify-transaction.ts";
import { pollChain } from "../../../../shared/settlement/listener.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

/**
 * Issue 5's acceptance list, through the api app on the in-memory simulated
 * chains: repayment instructions signed by the borrower's own viem account
 * (EVM) or sent as a jetton transfer with its comment (TON), the settlement
 * listener's amounts (full, partial, surplus, recovery, REPAID → unmatched),
 * spoofing, failed repayments, idempotent polling, and the error answers.
 */

const DAY_S = 86_400;
const UNITS = 1_000_000n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TON_CONFIG = CHAIN_CONFIG.TON_TESTNET;
/** The settlement wallet and jetton master as TON_TESTNET instructions show them (user-friendly, testnet flag). */
const TON_SETTLEMENT_WALLET = Address.parse(TON_CONFIG.settlementWallet!).toString({ urlSafe: true, bounceable: false, testOnly: true });
const TON_JETTON_MASTER = Address.parse(TON_CONFIG.token.address).toString({ urlSafe: true, bounceable: true, testOnly: true });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

// --- helpers -----------------------------------------------------------------

type Merchant = Awaited<ReturnType<typeof sandboxTenant>>;

const listenerDeps = () => ({ db: t.db, chain: t.deps.chain, writer: t.deps.writer, clock: t.clock });

const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());
/** A fresh TON account in raw form. */
const newTonAddress = () => `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;

const getLoan = async (key: string, id: string) => {
  const res = await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(key) });
  expect(res.status).toBe(200);
  return res.body;
};
const repay = (key: string, loanId: string) => t.request("POST", `/v1/loans/${loanId}/repay`, { headers: apiKey(key) });
const instructionsOf = async (key: string, loanId: string) => {
  const res = await repay(key, loanId);
  if (res.status !== 200) throw new Error(`repay instructions: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
/** The loan's event types, oldest first. */
const typesOf = async (key: string, loanId: string): Promise<string[]> => {
  const res = await t.request("GET", `/v1/events?loanId=${loanId}&limit=100`, { headers: apiKey(key) });
  expect(res.status).toBe(200);
  return (res.body.data as { type: string }[]).map((e) => e.type).reverse();
};
const eventsOf = async (key: string, loanId: string, type: string): Promise<any[]> =>
  (await t.request("GET", `/v1/events?loanId=${loanId}&type=${type}&limit=100`, { headers: apiKey(key) })).body.data as any[];
const settlementsOf = async (key: string, loanId: string): Promise<any[]> => {
  const res = await t.request("GET", `/v1/settlements/${loanId}?limit=100`, { headers: apiKey(key) });
  expect(res.status).toBe(200);
  expect(res.body.loanId).toBe(loanId);
  expect(res.body.nextCursor).toBeNull();
  // Newest first, as every list: oldest first here, as the tests tell the story.
  return [...res.body.data].reverse();
};
const unmatchedOf = async (key: string): Promise<any[]> => {
  const res = await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(key) });
  expect(res.status).toBe(200);
  return res.body.data;
};
const tenantNow = async (key: string) => Date.parse((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(key) })).body.now);
const advance = async (key: string, seconds: number) => {
  const res = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(key) });
  expect(res.status).toBe(200);
  return res.body;
};

/** The tenant's pool of `stablecoin`, in base units. */
async function poolOf(tenantId: string, stablecoin: "USDC" | "USDT") {
  const [pool] = await t.db
    .select({ available: liquidityPools.available, reserved: liquidityPools.reserved })
    .from(liquidityPools)
    .where(and(eq(liquidityPools.tenantId, tenantId), eq(liquidityPools.stablecoin, stablecoin)));
  if (!pool) throw new Error(`no ${stablecoin} pool for ${tenantId}`);
  return pool;
}

async function faucet(key: string, chain: Chain, address: string, amount: string) {
  const res = await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain, address, amount }, headers: apiKey(key) });
  if (res.status !== 200) throw new Error(`faucet: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A merchant configuration on another rail (JWT), returning its loan product. */
async function railProduct(m: Merchant, network: "BASE" | "TON", stablecoin: "USDC" | "USDT") {
  const res = await t.request("POST", "/v1/merchant-configs", {
    body: {
      network,
      stablecoin,
      tenures: [3, 7, 15],
      minTicket: "10.00",
      maxTicket: "1000.00",
      gracePeriodDays: 3,
      processingFee: { type: "PERCENTAGE", value: "2.00" },
      lateFee: { type: "FIXED", value: "1.00" },
    },
    headers: bearer(m.token),
  });
  if (res.status !== 201) throw new Error(`merchant config: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.loanProductId as string;
}

/** A sandbox tenant with a TON/USDT rail and a funded USDT pool. */
async function tonMerchant() {
  const m = await sandboxTenant(t, "Ton Shop");
  const tonProductId = await railProduct(m, "TON", "USDT");
  const pool = await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00", stablecoin: "USDT" }, headers: apiKey(m.key) });
  expect(pool.status).toBe(200);
  return { ...m, tonProductId };
}

/** An ACTIVE TON_TESTNET loan of 100.00 (102.00 due) to a fresh raw address, which also gets `faucetAmount` test USDT. */
async function tonLoan(m: Awaited<ReturnType<typeof tonMerchant>>, overrides: Record<string, unknown> = {}, faucetAmount = "10.00") {
  const borrower = newTonAddress();
  const loan = await createdLoan(t, m.key, {
    loanProductId: m.tonProductId,
    chain: "TON_TESTNET",
    borrowerWalletAddress: borrower,
    tenureDays: 3,
    ...overrides,
  });
  expect(loan).toMatchObject({ status: "ACTIVE", chain: "TON_TESTNET", stablecoin: "USDT", totalDue: "102.00" });
  if (faucetAmount !== "0") await faucet(m.key, "TON_TESTNET", borrower, faucetAmount);
  return { loan, borrower: loan.borrowerWalletAddress as string };
}

async function tonTransfer(key: string, body: { from: string; to: string; amount: string; comment?: string | null; token?: string }) {
  const res = await t.request("POST", "/v1/sandbox/chain/transfers", { body: { chain: "TON_TESTNET", ...body }, headers: apiKey(key) });
  if (res.status !== 200) throw new Error(`transfer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { txHash: string; status: string; blockNumber: number; failureReason: string | null };
}

/** Nonces per account as a wallet tracks them: from 0, one per submitted transaction (reverted ones too). */
const nonces = new Map<string, number>();
const nextNonce = (account: PrivateKeyAccount) => {
  const n = nonces.get(account.address) ?? 0;
  nonces.set(account.address, n + 1);
  return n;
};

/** Signs `tx` as the borrower's wallet would, for `chain`, with the account's next nonce. */
async function sign(account: PrivateKeyAccount, chain: Chain, tx: { to: string; data: string }) {
  return signAsBorrower(account, CHAIN_CONFIG[chain].chainId!, nextNonce(account), tx);
}

async function submit(key: string, chain: Chain, signedTransaction: string) {
  const res = await t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain, signedTransaction }, headers: apiKey(key) });
  if (res.status !== 200) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { txHash: string; status: "success" | "reverted"; blockNumber: number; from: string; revertReason: string | null };
}

/** Signs and submits the instructions' approve and repay, in order; returns both results. */
async function signAndRepay(key: string, account: PrivateKeyAccount, instructions: any) {
  const [approveTx, repayTx] = instructions.transactions;
  const approve = await submit(key, instructions.chain, await sign(account, instructions.chain, approveTx));
  const repaid = await submit(key, instructions.chain, await sign(account, instructions.chain, repayTx));
  return { approve, repay: repaid };
}

/** approve + repay calldata for an amount of our choosing (partial or overpayment). */
function evmCalls(chain: Chain, loanId: string, amount: bigint) {
  const pool = getAddress(CHAIN_CONFIG[chain].pool!);
  return {
    approve: { to: getAddress(CHAIN_CONFIG[chain].token.address), data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [pool, amount] }) },
    repay: { to: pool, data: encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loanId), pool, amount] }) },
  };
}

/** An ACTIVE EVM loan of 100.00 (102.00 due) to the account's address. */
async function evmLoan(m: Merchant, account: PrivateKeyAccount, overrides: Record<string, unknown> = {}) {
  const loan = await createdLoan(t, m.key, { borrowerWalletAddress: account.address, ...overrides });
  expect(loan).toMatchObject({ status: "ACTIVE", totalDue: "102.00" });
  return loan;
}

const expectFieldError = (res: { status: number; body: any }, field: string) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

// --- EVM happy path -----------------------------------------------------------

describe("EVM: the borrower signs the returned approve and repay", () => {
  for (const chain of ["POLYGON_AMOY", "BASE_SEPOLIA"] as const) {
    test(`${chain}: REPAID with loan.repaid, FUNDING then REPAYMENT in the history, one loan id, the pool back up by the total due`, async () => {
      const m = await sandboxTenant(t);
      const loanProductId = chain === "BASE_SEPOLIA" ? await railProduct(m, "BASE", "USDC") : m.loanProductId;
      const borrower = newAccount();
      const loan = await evmLoan(m, borrower, { chain, loanProductId });
      const config = CHAIN_CONFIG[chain];
      const sim = t.simChains.chain(chain, m.tenantId);
      expect(await sim.balanceOf(borrower.address)).toBe(100n * UNITS);
      // The borrower received the principal; the processing fee comes from their own pocket.
      await faucet(m.key, chain, borrower.address, "5.00");
      const poolBefore = await poolOf(m.tenantId, "USDC");
      const poolContractBefore = await sim.balanceOf(config.pool!);

      const instructions = await instructionsOf(m.key, loan.id);
      const token = getAddress(config.token.address);
      const pool = getAddress(config.pool!);
      expect(instructions).toEqual({
        chain,
        supported: true,
        chainId: config.chainId,
        token: { address: token, symbol: "USDC", decimals: 6 },
        spender: pool,
        collections: pool,
        amount: "102.00",
        amountUnits: "102000000",
        loanIdBytes32: loanIdToBytes32(loan.id),
        transactions: [
          {
            to: token,
            data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [pool, 102n * UNITS] }),
            value: "0",
            description: expect.any(String),
          },
          {
            to: pool,
            data: encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loan.id), pool, 102n * UNITS] }),
            value: "0",
            description: expect.any(String),
          },
        ],
      });

      const { approve, repay: repaid } = await signAndRepay(m.key, borrower, instructions);
      expect(approve).toMatchObject({ status: "success", from: borrower.address, revertReason: null });
      expect(repaid).toMatchObject({ status: "success", from: borrower.address, revertReason: null });
      expect(repaid.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(repaid.blockNumber).toBeGreaterThan(approve.blockNumber);

      // GET right after the helper answers: already applied.
      const after = await getLoan(m.key, loan.id);
      expect(after).toMatchObject({
        id: loan.id,
        status: "REPAID",
        derivedStatus: "REPAID",
        totalDue: "102.00",
        amountPaid: "102.00",
        amountDue: "0.00",
        surplus: "0.00",
      });
      expect(after.repaidAt).toEqual(expect.any(String));

      expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
      const [repaidEvent] = await eventsOf(m.key, loan.id, "loan.repaid");
      expect(repaidEvent.data.loan).toMatchObject({ id: loan.id, status: "REPAID" });

      const history = await settlementsOf(m.key, loan.id);
      expect(history).toEqual([
        expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", chain, asset: "USDC", txHash: loan.fundingTxHash }),
        expect.objectContaining({
          kind: "REPAYMENT",
          status: "CONFIRMED",
          amount: "102.00",
          chain,
          asset: "USDC",
          txHash: repaid.txHash,
          from: borrower.address,
          to: pool,
        }),
      ]);

      // Money moved on the chain and in the books, once.
      expect(await sim.balanceOf(borrower.address)).toBe(3n * UNITS);
      expect(await sim.balanceOf(config.pool!)).toBe(poolContractBefore + 102n * UNITS);
      expect(await sim.allowance(borrower.address, pool)).toBe(0n);
      const poolAfter = await poolOf(m.tenantId, "USDC");
      expect(poolAfter.available - poolBefore.available).toBe(102n * UNITS);
      expect(poolAfter.reserved).toBe(poolBefore.reserved);

      // The loan id never changed: the one the API gave is the one on chain, in the history and in the events.
      expect(loan.id).toMatch(UUID);
      expect(repaidEvent.data.loan.id).toBe(loan.id);
      expect(await repay(m.key, loan.id)).toMatchObject({ status: 409 });
    });
  }
});

// --- what the settlement records ---------------------------------------------

describe("what the settlement records", () => {
  test("the settlement history names the block of each movement", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "2.00");
    const { repay: repaid } = await signAndRepay(m.key, borrower, await instructionsOf(m.key, loan.id));
    const history = await settlementsOf(m.key, loan.id);
    expect(history[1]).toMatchObject({ kind: "REPAYMENT", txHash: repaid.txHash, blockNumber: repaid.blockNumber });
    expect(history[0].blockNumber).toEqual(expect.any(Number));
  });

  test("repaidAt is the time of the repayment on the tenant's clock (EVM, TON, and after clock/advance)", async () => {
    const m = await tonMerchant();
    const borrower = newAccount();
    const evm = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "2.00");
    await signAndRepay(m.key, borrower, await instructionsOf(m.key, evm.id));
    const seen = [{ loan: "EVM", repaidAt: (await getLoan(m.key, evm.id)).repaidAt, tenantNow: new Date(await tenantNow(m.key)).toISOString() }];

    const { loan: ton, borrower: tonBorrower } = await tonLoan(m);
    await advance(m.key, 2 * DAY_S);
    const instructions = await instructionsOf(m.key, ton.id);
    await tonTransfer(m.key, { from: tonBorrower, to: instructions.to, amount: instructions.amount, comment: instructions.comment });
    seen.push({ loan: "TON, 2 days later", repaidAt: (await getLoan(m.key, ton.id)).repaidAt, tenantNow: new Date(await tenantNow(m.key)).toISOString() });
    // Within the second of the block that carried the payment.
    const inWindow = (r: (typeof seen)[number]) =>
      r.repaidAt !== null && Date.parse(r.tenantNow) - Date.parse(r.repaidAt) >= 0 && Date.parse(r.tenantNow) - Date.parse(r.repaidAt) < 1000;
    expect(seen.map((r) => ({ ...r, inWindow: inWindow(r) }))).toEqual(seen.map((r) => ({ ...r, inWindow: true })));
  });

  test("a payment of the instructed amount after real time passed dueAt (before any sweep) repays exactly, no surplus", async () => {
    // Its own app: this moves the shared clock (real time), not a tenant's sandbox offset.
    const own = await createTestApp();
    try {
      const m = await sandboxTenant(own);
      const borrower = newAccount();
      const loan = await createdLoan(own, m.key, { borrowerWalletAddress: borrower.address, tenureDays: 3 });
      own.clock.advance(3 * DAY_S * 1000 + 60_000);
      const res = await own.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.key) });
      expect(res.body).toMatchObject({ amount: "103.00", amountUnits: "103000000" });
      await own.simChains.chain("POLYGON_AMOY", m.tenantId).faucet({ address: borrower.address, amount: 3n * UNITS });
      const signed = (tx: { to: string; data: string }, nonce: number) => signAsBorrower(borrower, 80002, nonce, tx);
      for (const [i, tx] of res.body.transactions.entries()) {
        const sent = await own.request("POST", "/v1/sandbox/chain/transactions", {
          body: { chain: "POLYGON_AMOY", signedTransaction: await signed(tx, i) },
          headers: apiKey(m.key),
        });
        expect(sent.body.status).toBe("success");
      }
      const after = (await own.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body;
      expect({ status: after.status, lateFee: after.lateFee, totalDue: after.totalDue, amountPaid: after.amountPaid, surplus: after.surplus }).toEqual({
        status: "REPAID",
        lateFee: "1.00",
        totalDue: "103.00",
        amountPaid: "103.00",
        surplus: "0.00",
      });
    } finally {
      own.close();
    }
  });
});

// --- TON ----------------------------------------------------------------------

describe("TON on TON_TESTNET", () => {
  test("instructions have exactly the SPEC.md fields, for the total due with 6 decimals", async () => {
    const m = await tonMerchant();
    const { loan } = await tonLoan(m);
    const res = await repay(m.key, loan.id);
    expect(res.status).toBe(200);
    const comment = `svc:repay:${loan.id}`;
    expect(Object.keys(res.body).sort()).toEqual(["amount", "amountUnits", "asset", "chain", "comment", "jettonMaster", "links", "supported", "to"]);
    expect(res.body).toEqual({
      chain: "TON_TESTNET",
      supported: true,
      to: TON_SETTLEMENT_WALLET,
      asset: "USDT",
      amount: "102.000000",
      amountUnits: "102000000",
      comment,
      jettonMaster: TON_JETTON_MASTER,
      links: { ton: expect.any(String), tonkeeper: expect.any(String) },
    });
    // User-friendly testnet forms of the configured wallet and jetton master.
    expect(res.body.to).toMatch(/^0Q/);
    expect(res.body.jettonMaster).toMatch(/^kQ/);
    expect(Address.parse(res.body.to).toRawString()).toBe(TON_CONFIG.settlementWallet!);
    expect(Address.parse(res.body.jettonMaster).toRawString()).toBe(TON_CONFIG.token.address);
    const link = new URL(res.body.links.ton);
    expect(link.protocol).toBe("ton:");
    expect(res.body.links.ton.startsWith(`ton://transfer/${TON_SETTLEMENT_WALLET}?`)).toBe(true);
    expect(link.searchParams.get("jetton")).toBe(TON_JETTON_MASTER);
    expect(link.searchParams.get("amount")).toBe("102000000");
    expect(link.searchParams.get("text")).toBe(comment);
  });

  test("a wrong comment leaves the loan ACTIVE and is kept as unmatched for the tenant; an Owner attributes it and the loan is REPAID", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const instructions = await instructionsOf(m.key, loan.id);
    const poolBefore = await poolOf(m.tenantId, "USDT");

    const wrong = await tonTransfer(m.key, { from: borrower, to: instructions.to, amount: instructions.amount, comment: `svc:repay:${loan.id.toUpperCase()}` });
    expect(wrong.status).toBe("success");
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", amountDue: "102.00" });
    expect((await settlementsOf(m.key, loan.id)).map((s) => s.kind)).toEqual(["FUNDING"]);
    expect(await typesOf(m.key, loan.id)).not.toContain("loan.repaid");

    const [kept] = (await unmatchedOf(m.key)).filter((u) => u.txHash === wrong.txHash);
    expect(kept).toMatchObject({
      chain: "TON_TESTNET",
      txHash: wrong.txHash,
      blockNumber: wrong.blockNumber,
      from: borrower,
      to: TON_CONFIG.settlementWallet,
      token: TON_CONFIG.token.address,
      amount: "102.00",
      comment: `svc:repay:${loan.id.toUpperCase()}`,
      claimedLoanId: null,
      reason: expect.any(String),
      attributedLoanId: null,
      attributedAt: null,
      attributedBy: null,
    });
    // Another tenant does not see it.
    const other = await sandboxTenant(t);
    expect((await unmatchedOf(other.key)).some((u) => u.txHash === wrong.txHash)).toBe(false);

    // A MEMBER may not attribute; the Owner may.
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const attributeUrl = `/v1/settlements/unmatched/${kept.id}/attribute`;
    expect((await t.request("POST", attributeUrl, { body: { loanId: loan.id }, headers: bearer(member.token) })).status).toBe(403);
    expect((await t.request("POST", attributeUrl, { body: { loanId: loan.id }, headers: apiKey(m.key) })).status).toBe(401);
    const attributed = await t.request("POST", attributeUrl, { body: { loanId: loan.id }, headers: bearer(m.token) });
    expect(attributed.status).toBe(200);
    expect(attributed.body.unmatched).toMatchObject({ id: kept.id, attributedLoanId: loan.id, attributedBy: `user:${m.userId}` });
    expect(attributed.body.unmatched.attributedAt).toEqual(expect.any(String));
    expect(attributed.body.loan).toMatchObject({ id: loan.id, status: "REPAID" });

    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "0.00" });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    expect(await settlementsOf(m.key, loan.id)).toEqual([
      expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", asset: "USDT" }),
      expect.objectContaining({ kind: "REPAYMENT", status: "CONFIRMED", amount: "102.00", asset: "USDT", txHash: wrong.txHash }),
    ]);
    expect((await poolOf(m.tenantId, "USDT")).available - poolBefore.available).toBe(102n * UNITS);
    // Twice: 409.
    expect((await t.request("POST", attributeUrl, { body: { loanId: loan.id }, headers: bearer(m.token) })).status).toBe(409);
  });

  test("the exact comment repays the loan", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const instructions = await instructionsOf(m.key, loan.id);
    const poolBefore = await poolOf(m.tenantId, "USDT");
    const sim = t.simChains.chain("TON_TESTNET", m.tenantId);
    const walletBefore = await sim.balanceOf(TON_CONFIG.settlementWallet!);

    const paid = await tonTransfer(m.key, { from: borrower, to: instructions.to, amount: instructions.amount, comment: instructions.comment });
    expect(paid).toMatchObject({ status: "success", failureReason: null });

    const after = await getLoan(m.key, loan.id);
    expect(after).toMatchObject({ id: loan.id, status: "REPAID", amountPaid: "102.00", amountDue: "0.00", surplus: "0.00" });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    expect(await settlementsOf(m.key, loan.id)).toEqual([
      expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", chain: "TON_TESTNET", asset: "USDT", txHash: loan.fundingTxHash }),
      expect.objectContaining({
        kind: "REPAYMENT",
        status: "CONFIRMED",
        amount: "102.00",
        chain: "TON_TESTNET",
        asset: "USDT",
        txHash: paid.txHash,
        from: borrower,
        to: TON_CONFIG.settlementWallet,
      }),
    ]);
    expect(await sim.balanceOf(borrower)).toBe(8n * UNITS);
    expect((await sim.balanceOf(TON_CONFIG.settlementWallet!)) - walletBefore).toBe(102n * UNITS);
    expect((await poolOf(m.tenantId, "USDT")).available - poolBefore.available).toBe(102n * UNITS);
    expect((await unmatchedOf(m.key)).some((u) => u.txHash === paid.txHash)).toBe(false);
  });

  test("after clock/advance past dueAt the instructions' amount rises by the late fee, to the cent; paying it repays the loan", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const before = await instructionsOf(m.key, loan.id);
    expect(before).toMatchObject({ amount: "102.000000", amountUnits: "102000000" });

    // One minute past dueAt: one started day of the 1.00 late fee.
    const seconds = Math.ceil((Date.parse(loan.dueAt) - (await tenantNow(m.key))) / 1000) + 60;
    await advance(m.key, seconds);
    const late = await instructionsOf(m.key, loan.id);
    expect(late).toMatchObject({ amount: "103.000000", amountUnits: "103000000", comment: `svc:repay:${loan.id}` });
    expect(new URL(late.links.ton).searchParams.get("amount")).toBe("103000000");
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "ACTIVE", overdue: true, lateFee: "1.00", totalDue: "103.00" });

    // Another started day: one more.
    await advance(m.key, DAY_S);
    const later = await instructionsOf(m.key, loan.id);
    expect(later).toMatchObject({ amount: "104.000000", amountUnits: "104000000" });

    await tonTransfer(m.key, { from: borrower, to: later.to, amount: later.amount, comment: later.comment });
    const after = await getLoan(m.key, loan.id);
    expect(after).toMatchObject({ status: "REPAID", lateFee: "2.00", totalDue: "104.00", amountPaid: "104.00", surplus: "0.00" });
    expect((await settlementsOf(m.key, loan.id)).map((s) => [s.kind, s.amount])).toEqual([
      ["FUNDING", "100.00"],
      ["REPAYMENT", "104.00"],
    ]);
  });
});

// --- amounts ------------------------------------------------------------------

describe("amounts", () => {
  test("a partial payment keeps the loan ACTIVE with the rest due; the rest repays it", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const poolBefore = await poolOf(m.tenantId, "USDT");

    const first = await tonTransfer(m.key, { from: borrower, to: TON_SETTLEMENT_WALLET, amount: "40.500000", comment: `svc:repay:${loan.id}` });
    expect(await getLoan(m.key, loan.id)).toMatchObject({
      status: "ACTIVE",
      totalDue: "102.00",
      amountPaid: "40.50",
      amountDue: "61.50",
      repaidAt: null,
    });
    const rest = await instructionsOf(m.key, loan.id);
    expect(rest).toMatchObject({ amount: "61.500000", amountUnits: "61500000" });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);

    const second = await tonTransfer(m.key, { from: borrower, to: rest.to, amount: rest.amount, comment: rest.comment });
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00", amountDue: "0.00", surplus: "0.00" });
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    expect((await settlementsOf(m.key, loan.id)).map((s) => [s.kind, s.status, s.amount, s.txHash])).toEqual([
      ["FUNDING", "CONFIRMED", "100.00", loan.fundingTxHash],
      ["PARTIAL_REPAYMENT", "CONFIRMED", "40.50", first.txHash],
      ["REPAYMENT", "CONFIRMED", "61.50", second.txHash],
    ]);
    expect((await poolOf(m.tenantId, "USDT")).available - poolBefore.available).toBe(102n * UNITS);
  });

  test("an overpayment (EVM) repays the loan and records the surplus as a SURPLUS row", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "10.00");
    const poolBefore = await poolOf(m.tenantId, "USDC");
    const calls = evmCalls("POLYGON_AMOY", loan.id, 105_250_000n);
    await submit(m.key, "POLYGON_AMOY", await sign(borrower, "POLYGON_AMOY", calls.approve));
    const repaid = await submit(m.key, "POLYGON_AMOY", await sign(borrower, "POLYGON_AMOY", calls.repay));
    expect(repaid.status).toBe("success");

    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "3.25" });
    expect((await settlementsOf(m.key, loan.id)).map((s) => [s.kind, s.status, s.amount, s.txHash])).toEqual([
      ["FUNDING", "CONFIRMED", "100.00", loan.fundingTxHash],
      ["REPAYMENT", "CONFIRMED", "102.00", repaid.txHash],
      ["SURPLUS", "CONFIRMED", "3.25", repaid.txHash],
    ]);
    // The history is a list as every other (DECISIONS.md "Lists"): newest first, paged by `limit` and `cursor`. The
    // repayment and its surplus, written in one batch at one millisecond, keep the order they were written in.
    const pages: any[] = [];
    for (let cursor: string | null = null, n = 0; n === 0 || cursor !== null; n++) {
      const query: string = cursor ? `?limit=1&cursor=${cursor}` : "?limit=1";
      const page = await t.request("GET", `/v1/settlements/${loan.id}${query}`, { headers: apiKey(m.key) });
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(1);
      pages.push(page.body.data[0]);
      cursor = page.body.nextCursor;
    }
    expect(pages.map((s) => s.kind)).toEqual(["SURPLUS", "REPAYMENT", "FUNDING"]);
    expect((await t.request("GET", `/v1/settlements/${loan.id}?cursor=not-a-cursor`, { headers: apiKey(m.key) })).status).toBe(400);
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repaid"]);
    // The pool takes back what the loan owed; the surplus is refundable, not the pool's.
    expect((await poolOf(m.tenantId, "USDC")).available - poolBefore.available).toBe(102n * UNITS);
  });

  test("a payment after DEFAULTED recovers the loan to REPAID with loan.repaid", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    await advance(m.key, 30 * DAY_S);
    expect(await getLoan(m.key, loan.id)).toMatchObject({ status: "DEFAULTED", lateFee: "3.00", totalDue: "105.00" });
    const instructions = await instructionsOf(m.key, loan.id);
    expect(instructions).toMatchObject({ amount: "105.000000", amountUnits: "105000000" });

    await tonTransfer(m.key, { from: borrower, to: instructions.to, amount: instructions.amount, comment: instructions.comment });
    const after = await getLoan(m.key, loan.id);
    expect(after).toMatchObject({ status: "REPAID", amountPaid: "105.00", surplus: "0.00" });
    expect(after.defaultedAt).toEqual(expect.any(String));
    expect(await typesOf(m.key, loan.id)).toEqual([
      "loan.application_submitted",
      "loan.decision",
      "loan.funded",
      "loan.overdue",
      "loan.defaulted",
      "loan.repaid",
    ]);
    expect((await settlementsOf(m.key, loan.id)).map((s) => [s.kind, s.amount])).toEqual([
      ["FUNDING", "100.00"],
      ["REPAYMENT", "105.00"],
    ]);
  });

  test("a payment to a REPAID loan is kept as unmatched for the loan's tenant and changes nothing", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "200.00");
    const instructions = await instructionsOf(m.key, loan.id);
    await signAndRepay(m.key, borrower, instructions);
    expect((await getLoan(m.key, loan.id)).status).toBe("REPAID");
    const poolBefore = await poolOf(m.tenantId, "USDC");

    // The same instructions signed again (a wallet that kept them): the chain takes the money, the loan does not.
    const again = await signAndRepay(m.key, borrower, instructions);
    expect(again.repay.status).toBe("success");
    const after = await getLoan(m.key, loan.id);
    expect(after).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "0.00" });
    expect((await settlementsOf(m.key, loan.id)).map((s) => s.kind)).toEqual(["FUNDING", "REPAYMENT"]);
    expect((await typesOf(m.key, loan.id)).filter((x) => x === "loan.repaid")).toHaveLength(1);
    expect((await poolOf(m.tenantId, "USDC")).available).toBe(poolBefore.available);

    const kept = (await unmatchedOf(m.key)).filter((u) => u.txHash === again.repay.txHash);
    expect(kept).toEqual([
      expect.objectContaining({
        chain: "POLYGON_AMOY",
        from: borrower.address,
        amount: "102.00",
        claimedLoanId: loan.id,
        reason: expect.stringContaining("REPAID"),
        attributedLoanId: null,
      }),
    ]);
  });
});

// --- spoofing -----------------------------------------------------------------

describe("spoofing fails", () => {
  /** The loan is untouched: ACTIVE, nothing paid, no REPAYMENT row, no loan.repaid. */
  async function expectUnpaid(key: string, loanId: string) {
    expect(await getLoan(key, loanId)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", amountDue: "102.00", repaidAt: null });
    const history = await settlementsOf(key, loanId);
    expect(history.filter((s) => s.kind !== "FUNDING" && s.status === "CONFIRMED")).toEqual([]);
    expect(await typesOf(key, loanId)).not.toContain("loan.repaid");
  }

  test("a Repaid log with our pool's event topics from another contract", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    const poolBefore = await poolOf(m.tenantId, "USDC");
    const topics = encodeEventTopics({
      abi: SVC_POOL_ABI,
      eventName: "Repaid",
      args: { loanId: loanIdToBytes32(loan.id), payer: borrower.address, collections: getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!) },
    }) as string[];
    const data = encodeAbiParameters([{ type: "uint256" }], [102n * UNITS]);
    const impostor = newAccount().address;
    const emitted = await t.simChains
      .chain("POLYGON_AMOY", m.tenantId)
      .emitLogAs({ address: impostor, topics, data, from: borrower.address, sandboxTenantId: m.tenantId });
    const report = await pollChain(listenerDeps(), { chain: "POLYGON_AMOY", sandboxTenantId: m.tenantId });
    expect(report.lastBlock).toBeGreaterThanOrEqual(emitted.blockNumber);
    expect(report.payments).toBe(0);

    await expectUnpaid(m.key, loan.id);
    expect((await unmatchedOf(m.key)).some((u) => u.txHash === emitted.txHash)).toBe(false);
    expect((await poolOf(m.tenantId, "USDC")).available).toBe(poolBefore.available);

    // The simulator's impostor carries one log, so its Repaid is also unbacked. The address check on its own:
    // the same transaction with a real token transfer payer → pool counts only when Repaid comes from our pool.
    const [stored] = (await t.simChains.chain("POLYGON_AMOY", m.tenantId).readTransactions(emitted.blockNumber - 1, 1)).transactions;
    if (stored?.family !== "EVM") throw new Error("expected the impostor's EVM transaction");
    const token = getAddress(CHAIN_CONFIG.POLYGON_AMOY.token.address);
    const pool = getAddress(CHAIN_CONFIG.POLYGON_AMOY.pool!);
    const transferLog = {
      address: token,
      topics: encodeEventTopics({ abi: erc20Abi, eventName: "Transfer", args: { from: borrower.address, to: pool } }) as string[],
      data,
      logIndex: 0,
    };
    const withRepaidFrom = (address: string) => ({ ...stored, logs: [transferLog, { ...stored.logs[0]!, address, logIndex: 1 }] });
    // Nothing names the loan; the token that did reach the pool is kept as a payment naming no loan (unmatched).
    expect(classifyTransaction(withRepaidFrom(impostor))).toEqual([expect.objectContaining({ kind: "payment", loanId: null, logIndex: 0 })]);
    expect(classifyTransaction(withRepaidFrom(pool))).toEqual([
      expect.objectContaining({ kind: "payment", loanId: loan.id, amount: 102n * UNITS, from: borrower.address }),
    ]);
  });

  test("a transfer of another jetton with the right comment", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const fakeJetton = newTonAddress();
    await t.simChains.chain("TON_TESTNET", m.tenantId).faucet({ address: borrower, amount: 500n * UNITS, token: fakeJetton });
    const sent = await tonTransfer(m.key, {
      from: borrower,
      to: TON_SETTLEMENT_WALLET,
      amount: "102.000000",
      comment: `svc:repay:${loan.id}`,
      token: fakeJetton,
    });
    expect(sent.status).toBe("success");
    expect(await t.simChains.chain("TON_TESTNET", m.tenantId).balanceOf(TON_CONFIG.settlementWallet!, fakeJetton)).toBeGreaterThanOrEqual(102n * UNITS);
    await expectUnpaid(m.key, loan.id);
  });

  test("a transfer of USDT to another wallet with the right comment", async () => {
    const m = await tonMerchant();
    const { loan, borrower } = await tonLoan(m);
    const elsewhere = newTonAddress();
    const sent = await tonTransfer(m.key, { from: borrower, to: elsewhere, amount: "102.000000", comment: `svc:repay:${loan.id}` });
    expect(sent.status).toBe("success");
    expect(await t.simChains.chain("TON_TESTNET", m.tenantId).balanceOf(elsewhere)).toBe(102n * UNITS);
    await expectUnpaid(m.key, loan.id);
  });

  test("a reverted repay transaction", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    // Approves the full amount but holds only the principal: the repay reverts.
    const { approve, repay: reverted } = await signAndRepay(m.key, borrower, await instructionsOf(m.key, loan.id));
    expect(approve.status).toBe("success");
    expect(reverted.status).toBe("reverted");
    await expectUnpaid(m.key, loan.id);
  });
});

// --- failed repayments --------------------------------------------------------

describe("a repayment that reverts", () => {
  async function expectFailed(m: Merchant, loanId: string, txHash: string, amount: string) {
    expect(await getLoan(m.key, loanId)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", repaidAt: null });
    expect(await typesOf(m.key, loanId)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repayment_failed"]);
    const [failedEvent] = await eventsOf(m.key, loanId, "loan.repayment_failed");
    expect(failedEvent.data.loan).toMatchObject({ id: loanId, status: "ACTIVE" });
    // The transaction and what it tried to pay (a merchant had only the loan to go on).
    expect(failedEvent.data.payment).toMatchObject({ txHash, amount, chain: failedEvent.data.loan.chain, from: expect.any(String) });
    expect((await settlementsOf(m.key, loanId)).map((s) => [s.kind, s.status, s.amount, s.txHash])).toEqual([
      ["FUNDING", "CONFIRMED", "100.00", expect.any(String)],
      ["REPAYMENT", "FAILED", amount, txHash],
    ]);
  }

  test("without allowance: reverted, loan.repayment_failed, a FAILED settlement, the loan stays ACTIVE", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "5.00");
    const poolBefore = await poolOf(m.tenantId, "USDC");
    const [, repayTx] = (await instructionsOf(m.key, loan.id)).transactions;
    const res = await submit(m.key, "POLYGON_AMOY", await sign(borrower, "POLYGON_AMOY", repayTx));
    expect(res.status).toBe("reverted");
    expect(res.revertReason).toContain("allowance");
    await expectFailed(m, loan.id, res.txHash, "102.00");
    expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(borrower.address)).toBe(105n * UNITS);
    expect((await poolOf(m.tenantId, "USDC")).available).toBe(poolBefore.available);
  });

  test("with allowance but without balance: reverted, loan.repayment_failed, a FAILED settlement, the loan stays ACTIVE; then a real repayment still works", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    const instructions = await instructionsOf(m.key, loan.id);
    const { approve, repay: res } = await signAndRepay(m.key, borrower, instructions);
    expect(approve.status).toBe("success");
    expect(res.status).toBe("reverted");
    expect(res.revertReason).toContain("balance");
    await expectFailed(m, loan.id, res.txHash, "102.00");
    // Nothing moved: the allowance and the principal are still there.
    expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).balanceOf(borrower.address)).toBe(100n * UNITS);

    await faucet(m.key, "POLYGON_AMOY", borrower.address, "2.00");
    const retried = await submit(m.key, "POLYGON_AMOY", await sign(borrower, "POLYGON_AMOY", instructions.transactions[1]));
    expect(retried.status).toBe("success");
    expect((await getLoan(m.key, loan.id)).status).toBe("REPAID");
    expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.repayment_failed", "loan.repaid"]);
  });
});

// --- idempotent listener ------------------------------------------------------

describe("the listener credits a transaction once", () => {
  async function expectCreditedOnce(m: Merchant, loanId: string, txHash: string, stablecoin: "USDC" | "USDT", poolBefore: bigint) {
    expect(await getLoan(m.key, loanId)).toMatchObject({ status: "REPAID", amountPaid: "102.00", surplus: "0.00" });
    const history = await settlementsOf(m.key, loanId);
    expect(history.filter((s) => s.kind === "REPAYMENT")).toEqual([expect.objectContaining({ status: "CONFIRMED", amount: "102.00", txHash })]);
    expect(history.map((s) => s.kind)).toEqual(["FUNDING", "REPAYMENT"]);
    expect((await typesOf(m.key, loanId)).filter((x) => x === "loan.repaid")).toHaveLength(1);
    expect((await poolOf(m.tenantId, stablecoin)).available - poolBefore).toBe(102n * UNITS);
  }

  test("the same transaction polled again after the cursor was reset to 0", async () => {
    const m = await sandboxTenant(t);
    const borrower = newAccount();
    const loan = await evmLoan(m, borrower);
    await faucet(m.key, "POLYGON_AMOY", borrower.address, "2.00");
    const poolBefore = (await poolOf(m.tenantId, "USDC")).available;
    const { repay: repaid } = await signAndRepay(m.key, borrower, await instructionsOf(m.key, loan.id));
    await expectCreditedOnce(m, loan.id, repaid.txHash, "USDC", poolBefore);

    const ledger = and(eq(sandboxLedgers.tenantId, m.tenantId), eq(sandboxLedgers.chain, "POLYGON_AMOY"));
    const [cursor] = await t.db.select().from(sandboxLedgers).where(ledger);
    expect(cursor!.lastBlock).toBeGreaterThanOrEqual(repaid.blockNumber);
    await t.db.update(sandboxLedgers).set({ lastBlock: 0 }).where(ledger);
    const replay = await pollChain(listenerDeps(), { chain: "POLYGON_AMOY", sandboxTenantId: m.tenantId });
    expect(replay.transactions).toBeGreaterThanOrEqual(repaid.blockNumber);
    expect(replay.lastBlock).toBe(cursor!.lastBlock);
    // And once more from 0, for good measure.
    await t.db.update(sandboxLedgers).set({ lastBlock: 0 }).where(ledger);
    await pollChain(listenerDeps(), { chain: "POLYGON_AMOY", sandboxTenantId: m.tenantId });

    await expectCreditedOnce(m, loan.id, repaid.txHash, "USDC", poolBefore);
    expect((await unmatchedOf(m.key)).some((u) => u.txHash === repaid.txHash)).toBe(false);
  });

  test("two overlapping pollChain runs (EVM and TON)", async () => {
    // EVM: approve and repay go on the chain without the helper's poll.
    const m = await tonMerchant();
    const borrower = newAccount();
    const evm = await evmLoan(m, borrower);
    const amoy = t.simChains.chain("POLYGON_AMOY", m.tenantId);
    await amoy.faucet({ address: borrower.address, amount: 2n * UNITS });
    const usdcBefore = (await poolOf(m.tenantId, "USDC")).available;
    const [approveTx, repayTx] = (await instructionsOf(m.key, evm.id)).transactions;
    await amoy.submitEvmTransaction({ serializedTransaction: await sign(borrower, "POLYGON_AMOY", approveTx), sandboxTenantId: m.tenantId });
    const evmRepay = await amoy.submitEvmTransaction({ serializedTransaction: await sign(borrower, "POLYGON_AMOY", repayTx), sandboxTenantId: m.tenantId });
    expect(evmRepay.status).toBe("success");

    // TON: the transfer with the exact comment, likewise not yet polled.
    const { loan: ton, borrower: tonBorrower } = await tonLoan(m);
    const usdtBefore = (await poolOf(m.tenantId, "USDT")).available;
    const tonPaid = await t.simChains.chain("TON_TESTNET", m.tenantId).transferToken({
      from: tonBorrower,
      to: TON_CONFIG.settlementWallet!,
      amount: 102n * UNITS,
      comment: `svc:repay:${ton.id}`,
      sandboxTenantId: m.tenantId,
    });
    expect(tonPaid.status).toBe("success");
    expect((await getLoan(m.key, evm.id)).status).toBe("ACTIVE");
    expect((await getLoan(m.key, ton.id)).status).toBe("ACTIVE");

    const reports = await Promise.all([
      pollChain(listenerDeps(), { chain: "POLYGON_AMOY", sandboxTenantId: m.tenantId }),
      pollChain(listenerDeps(), { chain: "POLYGON_AMOY", sandboxTenantId: m.tenantId }),
      pollChain(listenerDeps(), { chain: "TON_TESTNET", sandboxTenantId: m.tenantId }),
      pollChain(listenerDeps(), { chain: "TON_TESTNET", sandboxTenantId: m.tenantId }),
    ]);
    // Both runs of each chain saw the payment; it counts once.
    expect(reports.map((r) => r.payments)).toEqual([1, 1, 1, 1]);

    await expectCreditedOnce(m, evm.id, evmRepay.txHash, "USDC", usdcBefore);
    await expectCreditedOnce(m, ton.id, tonPaid.txHash, "USDT", usdtBefore);
    const kept = await unmatchedOf(m.key);
    expect(kept.some((u) => u.txHash === evmRepay.txHash || u.txHash === tonPaid.txHash)).toBe(false);
  });
});

// --- errors -------------------------------------------------------------------

describe("errors", () => {
  test("repay on a CREATED loan (waiting for liquidity) or a declined one: 409", async () => {
    const m = await sandboxTenant(t);
    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: apiKey(m.key) });
    const waiting = await createdLoan(t, m.key);
    expect(waiting).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.key) })).status).toBe(200);
    const declined = await createdLoan(t, m.key);
    expect(declined).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED" });
    for (const loan of [waiting, declined]) {
      const res = await repay(m.key, loan.id);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ statusCode: 409, error: "Conflict" });
      expect(res.body.message).toContain("CREATED");
    }
  });

  test("another tenant's loan: 404 on repay, settlements and attribute; its unmatched payment: 404", async () => {
    const a = await tonMerchant();
    const b = await tonMerchant();
    const { loan, borrower } = await tonLoan(a);
    const notFound = { statusCode: 404, message: "Loan not found", error: "Not Found" };
    expect(await repay(b.key, loan.id)).toMatchObject({ status: 404, body: notFound });
    expect(await t.request("GET", `/v1/settlements/${loan.id}`, { headers: apiKey(b.key) })).toMatchObject({ status: 404, body: notFound });

    // B's own unmatched payment attributed to A's loan: 404, and it stays open.
    const { borrower: bBorrower } = await tonLoan(b);
    const stray = await tonTransfer(b.key, { from: bBorrower, to: TON_SETTLEMENT_WALLET, amount: "1.00", comment: "order 42" });
    const [bKept] = (await unmatchedOf(b.key)).filter((u) => u.txHash === stray.txHash);
    expect(bKept).toBeDefined();
    const cross = await t.request("POST", `/v1/settlements/unmatched/${bKept.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(b.token) });
    expect(cross).toMatchObject({ status: 404, body: notFound });
    expect((await unmatchedOf(b.key)).find((u) => u.id === bKept.id)).toMatchObject({ attributedLoanId: null });

    // A's unmatched payment, seen from B: 404.
    const aStray = await tonTransfer(a.key, { from: borrower, to: TON_SETTLEMENT_WALLET, amount: "1.00", comment: null });
    const [aKept] = (await unmatchedOf(a.key)).filter((u) => u.txHash === aStray.txHash);
    expect(aKept).toMatchObject({ comment: null, claimedLoanId: null });
    const theirs = await t.request("POST", `/v1/settlements/unmatched/${aKept.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(b.token) });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ statusCode: 404, error: "Not Found" });
    expect(await getLoan(a.key, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
  });

  describe("sandbox chain helpers", () => {
    test("a bad signed transaction: 400 naming signedTransaction", async () => {
      const m = await sandboxTenant(t);
      const borrower = newAccount();
      const loan = await evmLoan(m, borrower);
      const [approveTx] = (await instructionsOf(m.key, loan.id)).transactions;
      const post = (chain: string, signedTransaction: unknown) =>
        t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain, signedTransaction }, headers: apiKey(m.key) });

      // Not hex; hex that is no transaction; an unsigned transaction; signed for another chain id; a nonce too high.
      expectFieldError(await post("POLYGON_AMOY", "not hex"), "signedTransaction");
      expectFieldError(await post("POLYGON_AMOY", "0xdeadbeef"), "signedTransaction");
      const unsigned = serializeTransaction({
        chainId: 80002,
        nonce: 0,
        to: approveTx.to,
        data: approveTx.data,
        gas: 200_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        type: "eip1559",
      });
      expectFieldError(await post("POLYGON_AMOY", unsigned), "signedTransaction");
      const baseSigned = await borrower.signTransaction({
        chainId: 84532,
        nonce: 0,
        to: approveTx.to,
        data: approveTx.data,
        value: 0n,
        gas: 200_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        type: "eip1559",
      });
      const wrongChain = await post("POLYGON_AMOY", baseSigned);
      expectFieldError(wrongChain, "signedTransaction");
      expect(wrongChain.body.message.join(" ")).toContain("84532");
      const futureNonce = await borrower.signTransaction({
        chainId: 80002,
        nonce: 7,
        to: approveTx.to,
        data: approveTx.data,
        value: 0n,
        gas: 200_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        type: "eip1559",
      });
      expectFieldError(await post("POLYGON_AMOY", futureNonce), "signedTransaction");
      // Nothing of it reached the chain.
      expect(await t.simChains.chain("POLYGON_AMOY", m.tenantId).nonceOf(borrower.address)).toBe(0);
      expect(await typesOf(m.key, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
      // A field missing altogether.
      expectFieldError(
        await t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain: "POLYGON_AMOY" }, headers: apiKey(m.key) }),
        "signedTransaction",
      );
    });

    test("a live chain: 403 on faucet, transfers and transactions", async () => {
      const m = await sandboxTenant(t);
      const wallet = newAccount().address;
      const faucetRes = await t.request("POST", "/v1/sandbox/chain/faucet", {
        body: { chain: "POLYGON", address: wallet, amount: "5.00" },
        headers: apiKey(m.key),
      });
      expect(faucetRes.status).toBe(403);
      expect(faucetRes.body).toMatchObject({ statusCode: 403, error: "Forbidden" });
      const transferRes = await t.request("POST", "/v1/sandbox/chain/transfers", {
        body: { chain: "TON", from: newTonAddress(), to: newTonAddress(), amount: "1.00", comment: "x" },
        headers: apiKey(m.key),
      });
      expect(transferRes.status).toBe(403);
      const signed = await newAccount().signTransaction({
        chainId: 137,
        nonce: 0,
        to: wallet as Hex,
        data: "0x",
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        type: "eip1559",
      });
      const txRes = await t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain: "BASE", signedTransaction: signed }, headers: apiKey(m.key) });
      expect(txRes.status).toBe(403);
    });

    test("a bad address: 400 naming the field", async () => {
      const m = await sandboxTenant(t);
      const wallet = newAccount().address;
      expectFieldError(
        await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "POLYGON_AMOY", address: "0x1234", amount: "5.00" }, headers: apiKey(m.key) }),
        "address",
      );
      // A mixed-case address with a broken EIP-55 checksum: one letter's case flipped.
      const i = wallet.slice(2).search(/[a-fA-F]/) + 2;
      const flipped = wallet[i] === wallet[i]!.toLowerCase() ? wallet[i]!.toUpperCase() : wallet[i]!.toLowerCase();
      const broken = wallet.slice(0, i) + flipped + wallet.slice(i + 1);
      expectFieldError(
        await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "POLYGON_AMOY", address: broken, amount: "5.00" }, headers: apiKey(m.key) }),
        "address",
      );
      expectFieldError(
        await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "TON_TESTNET", address: wallet, amount: "5.00" }, headers: apiKey(m.key) }),
        "address",
      );
      const transfer = (body: Record<string, unknown>) =>
        t.request("POST", "/v1/sandbox/chain/transfers", { body: { chain: "TON_TESTNET", amount: "1.00", comment: "x", ...body }, headers: apiKey(m.key) });
      expectFieldError(await transfer({ from: "EQnot-an-address", to: TON_SETTLEMENT_WALLET }), "from");
      expectFieldError(await transfer({ from: newTonAddress(), to: "0:abc" }), "to");
      // A bad amount is named too.
      expectFieldError(
        await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "POLYGON_AMOY", address: wallet, amount: "1.0000001" }, headers: apiKey(m.key) }),
        "amount",
      );
    });

    test("no key: 401", async () => {
      const res = await t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain: "POLYGON_AMOY", address: newAccount().address, amount: "5.00" } });
      expect(res.status).toBe(401);
      expect((await t.request("POST", `/v1/loans/${crypto.randomUUID()}/repay`)).status).toBe(401);
    });
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
