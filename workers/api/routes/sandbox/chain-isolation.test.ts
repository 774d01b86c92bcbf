import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signAsBorrower } from "../../../../shared/testing/sign-as-borrower.ts";
import { Address } from "@ton/core";
import { encodeFunctionData, erc20Abi, getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { SVC_POOL_ABI } from "../../../../shared/chains/evm/svc-pool-abi.ts";
import { SIM_POOL_GENESIS_BALANCE } from "../../../../shared/chains/simulated/sim-chain-engine.ts";
import type { Chain } from "../../../../shared/domain/rails.ts";
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "../../openapi-examples.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

/**
 * DECISIONS.md "Modes": sandbox chains are isolated per tenant. What one
 * tenant does on a simulated chain (faucet, transfers, transactions) never
 * moves another tenant's or the platform's funds; the transfers helper moves
 * only wallets of the caller's own sandbox. Every attack here worked before
 * the simulated chains had one ledger per tenant.
 */

const UNITS = 1_000_000n;
const TON = CHAIN_CONFIG.TON_TESTNET;
const SOLANA = CHAIN_CONFIG.SOLANA_DEVNET;
const POLYGON = CHAIN_CONFIG.POLYGON_AMOY;
const POOL = getAddress(POLYGON.pool!);
const TOKEN = getAddress(POLYGON.token.address);
/** Anvil's account #1: its private key is published with every Foundry install. */
const ANVIL_1_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Merchant = Awaited<ReturnType<typeof sandboxTenant>>;

const newTonAddress = () => `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
const ledger = (m: Merchant, chain: Chain) => t.simChains.chain(chain, m.tenantId);

const faucet = (m: Merchant, chain: Chain, address: string, amount: string) =>
  t.request("POST", "/v1/sandbox/chain/faucet", { body: { chain, address, amount }, headers: apiKey(m.key) });
const transfer = (m: Merchant, body: { chain: Chain; from: string; to: string; amount: string; comment?: string }) =>
  t.request("POST", "/v1/sandbox/chain/transfers", { body, headers: apiKey(m.key) });
const submit = (m: Merchant, signedTransaction: string) =>
  t.request("POST", "/v1/sandbox/chain/transactions", { body: { chain: "POLYGON_AMOY", signedTransaction }, headers: apiKey(m.key) });

const signed = (account: PrivateKeyAccount, nonce: number, to: Hex, data: Hex) => signAsBorrower(account, POLYGON.chainId!, nonce, { to, data });

/** A sandbox tenant with a TON/USDT rail and a funded USDT pool, and one ACTIVE TON loan of 100.00 to a fresh wallet. */
async function tonLender() {
  const m = await sandboxTenant(t, "Ton Shop");
  const config = await t.request("POST", "/v1/merchant-configs", {
    body: { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" },
    headers: bearer(m.token),
  });
  expect(config.status).toBe(201);
  expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00", stablecoin: "USDT" }, headers: apiKey(m.key) })).status).toBe(200);
  const loan = await createdLoan(t, m.key, {
    loanProductId: config.body.loanProductId,
    chain: "TON_TESTNET",
    borrowerWalletAddress: newTonAddress(),
    tenureDays: 3,
  });
  expect(loan).toMatchObject({ status: "ACTIVE", chain: "TON_TESTNET" });
  return { ...m, loan, borrower: loan.borrowerWalletAddress as string };
}

const expectError = (res: { status: number; body: any }, status: number, field?: string) => {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ statusCode: status, error: status === 400 ? "Bad Request" : "Forbidden" });
  if (field) expect(res.body.message.some((line: string) => line.startsWith(`${field}: `))).toBe(true);
};

describe("a tenant's sandbox transfers move only its own wallets", () => {
  test("another tenant's borrower wallet as `from`: 400 naming from, and no balance moves on either ledger", async () => {
    const a = await tonLender();
    const b = await sandboxTenant(t, "Intruder");
    const thief = newTonAddress();
    const res = await transfer(b, { chain: "TON_TESTNET", from: a.borrower, to: thief, amount: "50.00" });
    expectError(res, 400, "from");
    // The borrower keeps its principal on its lender's ledger; nothing reached the thief anywhere.
    expect(await ledger(a, "TON_TESTNET").balanceOf(a.borrower)).toBe(100n * UNITS);
    expect(await ledger(a, "TON_TESTNET").balanceOf(thief)).toBe(0n);
    expect(await ledger(b, "TON_TESTNET").balanceOf(thief)).toBe(0n);
    expect(await ledger(b, "TON_TESTNET").head()).toBe(0);
  });

  for (const [chain, wallet] of [
    ["TON_TESTNET", TON.settlementWallet!],
    ["TON_TESTNET", Address.parse(TON.settlementWallet!).toString({ urlSafe: true, bounceable: false, testOnly: true })],
    ["SOLANA_DEVNET", SOLANA.settlementWallet!],
  ] as const) {
    test(`the platform's settlement wallet as \`from\` (${chain}, ${wallet.slice(0, 6)}…): 403, and it keeps its funds`, async () => {
      const b = await sandboxTenant(t, "Intruder");
      const thief = chain === "TON_TESTNET" ? newTonAddress() : SOLANA.token.address.replace(/^4/, "5");
      const res = await transfer(b, { chain, from: wallet, to: thief, amount: "1000.00" });
      expectError(res, 403);
      expect(res.body.message).toContain("platform");
      expect(await ledger(b, chain).balanceOf(CHAIN_CONFIG[chain].settlementWallet!)).toBe(SIM_POOL_GENESIS_BALANCE);
      expect(await ledger(b, chain).balanceOf(thief)).toBe(0n);
    });
  }

  test("tenant B's faucet and transfers never change tenant A's ledger, even for a wallet A knows", async () => {
    const a = await tonLender();
    const b = await sandboxTenant(t, "Neighbour");
    const headBefore = await ledger(a, "TON_TESTNET").head();
    expect((await faucet(b, "TON_TESTNET", a.borrower, "500.00")).status).toBe(200);
    const moved = await transfer(b, { chain: "TON_TESTNET", from: a.borrower, to: newTonAddress(), amount: "300.00" });
    expect(moved.body).toMatchObject({ status: "success" });
    // On B's ledger B moved its own test money; A's ledger did not see a block of it.
    expect(await ledger(b, "TON_TESTNET").balanceOf(a.borrower)).toBe(200n * UNITS);
    expect(await ledger(a, "TON_TESTNET").balanceOf(a.borrower)).toBe(100n * UNITS);
    expect(await ledger(a, "TON_TESTNET").head()).toBe(headBefore);
  });

  test("a payment on B's ledger naming A's loan does not touch A's loan: kept as unmatched for B, as naming no loan", async () => {
    const a = await tonLender();
    const b = await sandboxTenant(t, "Neighbour");
    const payer = newTonAddress();
    expect((await faucet(b, "TON_TESTNET", payer, "102.00")).status).toBe(200);
    const paid = await transfer(b, { chain: "TON_TESTNET", from: payer, to: TON.settlementWallet!, amount: "102.00", comment: `svc:repay:${a.loan.id}` });
    expect(paid.body).toMatchObject({ status: "success" });
    expect((await t.request("GET", `/v1/loans/${a.loan.id}`, { headers: apiKey(a.key) })).body).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    const keptFor = async (m: Merchant) =>
      (await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data.filter((u: any) => u.txHash === paid.body.txHash);
    expect(await keptFor(a)).toEqual([]);
    expect(await keptFor(b)).toEqual([expect.objectContaining({ claimedLoanId: a.loan.id, reason: "no loan with this id", amount: "102.00" })]);
  });
});

describe("signed EVM transactions run on the caller's own ledger", () => {
  test("a transfer signed with another tenant's borrower key: 400, and that borrower keeps its principal", async () => {
    const a = await sandboxTenant(t, "Lender");
    const borrower = privateKeyToAccount(generatePrivateKey());
    await createdLoan(t, a.key, { borrowerWalletAddress: borrower.address });
    expect(await ledger(a, "POLYGON_AMOY").balanceOf(borrower.address)).toBe(100n * UNITS);

    const b = await sandboxTenant(t, "Intruder");
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    const res = await submit(b, await signed(borrower, 0, TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [thief, 100n * UNITS] })));
    expectError(res, 400, "signedTransaction");
    expect(await ledger(a, "POLYGON_AMOY").balanceOf(borrower.address)).toBe(100n * UNITS);
    expect(await ledger(a, "POLYGON_AMOY").balanceOf(thief)).toBe(0n);
    expect(await ledger(b, "POLYGON_AMOY").balanceOf(thief)).toBe(0n);
  });

  test("collect signed with Anvil's published account #1 (once the simulated operator) reverts: the pool that funds loans keeps its tokens", async () => {
    const b = await sandboxTenant(t, "Intruder");
    const anvil1 = privateKeyToAccount(ANVIL_1_KEY);
    // Give it funds on B's ledger so the transaction is included and runs the pool's check.
    expect((await faucet(b, "POLYGON_AMOY", anvil1.address, "1.00")).status).toBe(200);
    const poolBefore = await ledger(b, "POLYGON_AMOY").balanceOf(POOL);
    const collect = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "collect", args: [anvil1.address, poolBefore] });
    const res = await submit(b, await signed(anvil1, 0, POOL, collect));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "reverted", from: anvil1.address, revertReason: "NotOperator()" });
    expect(await ledger(b, "POLYGON_AMOY").balanceOf(POOL)).toBe(poolBefore);
    expect(await ledger(b, "POLYGON_AMOY").balanceOf(anvil1.address)).toBe(1n * UNITS);
    // The tenant's loans are still funded from it.
    expect(await createdLoan(t, b.key)).toMatchObject({ status: "ACTIVE" });
  });

  test("one signed transaction sent on two tenants' ledgers is two payments: each tenant keeps its own unmatched payment (same hash)", async () => {
    const [a, b] = [await sandboxTenant(t, "First"), await sandboxTenant(t, "Second")];
    const wallet = privateKeyToAccount(generatePrivateKey());
    const stray = await signed(wallet, 0, TOKEN, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [POOL, 3n * UNITS] }));
    const hashes: string[] = [];
    for (const m of [a, b]) {
      expect((await faucet(m, "POLYGON_AMOY", wallet.address, "3.00")).status).toBe(200);
      const sent = await submit(m, stray);
      expect(sent.body).toMatchObject({ status: "success" });
      hashes.push(sent.body.txHash);
    }
    expect(hashes[0]).toBe(hashes[1]);
    for (const m of [a, b]) {
      const kept = (await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data.filter(
        (u: any) => u.txHash === hashes[0],
      );
      expect(kept).toEqual([expect.objectContaining({ amount: "3.00", from: wallet.address, attributedLoanId: null })]);
    }
  });

  test("a wrong nonce is 400 without the sender's expected nonce", async () => {
    const m = await sandboxTenant(t);
    const borrower = privateKeyToAccount(generatePrivateKey());
    await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [POOL, 1n] });
    expect((await submit(m, await signed(borrower, 0, TOKEN, approve))).body).toMatchObject({ status: "success" });
    // Another transaction with the used nonce (the same one again would answer its first inclusion), and one ahead.
    const another = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [POOL, 2n] });
    for (const nonce of [0, 5]) {
      const res = await submit(m, await signed(borrower, nonce, TOKEN, another));
      expectError(res, 400, "signedTransaction");
      expect(res.body.message).toEqual([`signedTransaction: wrong nonce: ${nonce} is not the next nonce of ${borrower.address}`]);
    }
  });
});

describe("reading a wallet: GET /v1/sandbox/chain/accounts/:address", () => {
  const read = (m: Merchant, chain: Chain, address: string) =>
    t.request("GET", `/v1/sandbox/chain/accounts/${encodeURIComponent(address)}?chain=${chain}`, { headers: apiKey(m.key) });

  test("the caller's own ledger: the borrower's principal and next nonce; another tenant sees nothing of it; TON has no nonce", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const borrower = privateKeyToAccount(generatePrivateKey());
    await createdLoan(t, a.key, { borrowerWalletAddress: borrower.address, principalAmount: "100.00" });
    expect((await read(a, "POLYGON_AMOY", borrower.address.toLowerCase())).body).toEqual({
      chain: "POLYGON_AMOY",
      address: borrower.address,
      balance: "100.000000",
      nonce: 0,
    });
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [POOL, 1n] });
    expect((await submit(a, await signed(borrower, 0, TOKEN, approve))).body).toMatchObject({ status: "success" });
    expect((await read(a, "POLYGON_AMOY", borrower.address)).body).toMatchObject({ balance: "100.000000", nonce: 1 });
    // B's ledger of the same chain has never seen the wallet.
    expect((await read(b, "POLYGON_AMOY", borrower.address)).body).toEqual({ chain: "POLYGON_AMOY", address: borrower.address, balance: "0.000000", nonce: 0 });
    const ton = newTonAddress();
    expect((await faucet(a, "TON_TESTNET", ton, "5.5")).status).toBe(200);
    expect((await read(a, "TON_TESTNET", ton)).body).toEqual({ chain: "TON_TESTNET", address: ton, balance: "5.500000", nonce: null });
  });

  test("a live chain: 403; an address that is not the chain's: 400 naming it; no chain: 400 naming it (a live key: modes.test.ts)", async () => {
    const m = await sandboxTenant(t);
    expectError(await read(m, "POLYGON", privateKeyToAccount(generatePrivateKey()).address), 403);
    expectError(await read(m, "POLYGON_AMOY", "not-an-address"), 400, "address");
    expectError(await read(m, "POLYGON_AMOY", newTonAddress()), 400, "address");
    expectError(await t.request("GET", `/v1/sandbox/chain/accounts/${POOL}`, { headers: apiKey(m.key) }), 400, "chain");
  });
});

test("no request in this file answered 500", () => {
  expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
});
