import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { type Address, encodeFunctionData, erc20Abi, getAddress, type Hex, HttpRequestError } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { settlements } from "../../db/schema/loan-records.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loans } from "../../db/schema/loans.ts";
import { chainBlocks, chainCursors, heldPayments, unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { readEvmTransactions } from "../chains/evm/live/evm-log-reader.ts";
import { SVC_POOL_ABI } from "../chains/evm/svc-pool-abi.ts";
import { type AnvilNode, deployRehearsalContracts, mintUsdc, type RehearsalDeployment, rehearsalContracts, startAnvil } from "../chains/evm/testing/anvil.ts";
import type { LiveChainSettings } from "../chains/live/live-config.ts";
import { loanIdToBytes32 } from "../chains/loan-id.ts";
import { inProcessLoanWriter } from "../loans/loan-commands.ts";
import { chainPortDouble, type ChainPortDouble } from "../testing/chain-port-double.ts";
import { bearer } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { certifiedLiveTenant, installSigner, OPERATOR_HEADERS, verifiedEvmWallet } from "../testing/live-tenants.ts";
import { apiKey, createLoan } from "../testing/loan-fixtures.ts";
import { MAX_RECEIPTS_PER_LOAN, MAX_REVERT_SCAN_BLOCKS, MAX_REVERT_SCAN_LAG } from "../chains/evm/live/evm-failed-repays.ts";
import { LISTEN_AFTER_DELETE_DAYS } from "./collections-wallets.ts";
import { heldBackoffMs } from "./held-payments.ts";
import { backoffMs, LEASE_MS, type EvmChainReader, evmChainReader, pollEvmChain, pollLiveEvmChains } from "./evm-listener.ts";
import { pollChain } from "./listener.ts";
import { sweepDueLoans } from "../sweeps/run-sweeps.ts";

/**
 * The live EVM settlement path against a real node (issue 13): Anvil as
 * POLYGON (chain id 137) with the rehearsal USDC and the compiled SvcPool.
 * Live loans are funded through the chain-port double (funding is the EVM
 * adapter's); the borrower then holds minted USDC on Anvil, signs the
 * instructions `POST /v1/loans/:id/repay` returns and sends them to Anvil,
 * and `pollEvmChain` reads the chain through viem.
 */

const CONFIRMATIONS = 2;
const USDC = (n: number) => BigInt(n) * 1_000_000n;

let t: TestApp;
let double: ChainPortDouble;
let node: AnvilNode;
let deployment: RehearsalDeployment;
let settings: LiveChainSettings;
let reader: EvmChainReader;

beforeAll(async () => {
  t = await createTestApp();
  double = chainPortDouble(t.deps.chain);
  t.deps.chain = double;
  t.deps.writer = inProcessLoanWriter({ db: t.db, chain: double, clock: t.clock });
  node = await startAnvil({ chainId: 137 });
  const deployed = await deployRehearsalContracts(node);
  deployment = { ...deployed, usdc: getAddress(deployed.usdc), pool: getAddress(deployed.pool) };
  settings = {
    chain: "POLYGON",
    rpcUrl: node.rpcUrl,
    apiKey: null,
    tokenAddress: deployment.usdc,
    poolAddress: deployment.pool,
    confirmations: CONFIRMATIONS,
    startBlock: 0,
  };
  // The api answers repay with this deployment's token and pool, as `npm run dev:live` configures it.
  t.deps.liveChains = { POLYGON: settings };
  reader = evmChainReader(settings, node.public);
});
afterAll(async () => {
  await node?.stop();
  t?.close();
});

const listenerDeps = () => ({ db: t.db, chain: t.deps.chain, writer: t.deps.writer, clock: t.clock });
const poll = () => pollEvmChain(listenerDeps(), { settings, reader });
const balanceOf = (address: Address, token: Address = deployment.usdc) =>
  node.public.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [address] });
const fresh = () => privateKeyToAccount(generatePrivateKey());
/** An account holding gas on Anvil (and nothing else): a stranger to every loan. */
const withGas = async (account: PrivateKeyAccount) => {
  await node.test.setBalance({ address: account.address, value: 10n ** 18n });
  return account;
};

/** A certified tenant with a live key, a KYC policy, a ready DISBURSEMENT wallet (on the double) and, unless told otherwise, a verified COLLECTIONS wallet. */
async function liveTenant(options: { collections?: boolean } = {}) {
  const m = await certifiedLiveTenant(t, "Live Collections Ltd");
  const key = generatePrivateKey();
  const disbursement = privateKeyToAccount(key);
  await verifiedEvmWallet(t, m.token, { chain: "POLYGON", role: "DISBURSEMENT", account: disbursement });
  await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });
  double.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(100_000), native: 10n ** 18n });
  const collections = fresh();
  const collectionsId =
    options.collections !== false ? await verifiedEvmWallet(t, m.token, { chain: "POLYGON", role: "COLLECTIONS", account: collections }) : null;
  return { ...m, collections: collections.address, collectionsId };
}

/** An ACTIVE live POLYGON loan of 100.00 whose borrower holds `holds` USDC and gas on Anvil. */
async function activeLoan(tenant: Awaited<ReturnType<typeof liveTenant>>, holds = USDC(200)) {
  const borrower = fresh();
  const ref = await tenant.verifiedBorrower("anvil-borrower");
  const created = await createLoan(t, tenant.liveKey, {
    chain: "POLYGON",
    borrowerRef: ref,
    borrowerWalletAddress: borrower.address,
    principalAmount: "100.00",
  });
  expect(created.status).toBe(201);
  expect(created.body.status).toBe("ACTIVE");
  await mintUsdc(node, deployment, borrower.address, holds);
  await node.test.setBalance({ address: borrower.address, value: 10n ** 18n });
  return { loan: created.body as { id: string; totalDue: string }, borrower };
}

type Instruction = { to: Hex; data: Hex; value: string };

/** The borrower's wallet: signs each returned transaction as is (EIP-1559, chain id 137) and broadcasts it; the raw bytes, for replay after a reorg. */
async function signAndSend(borrower: PrivateKeyAccount, instructions: { chainId: number; transactions: Instruction[] }): Promise<Hex[]> {
  const raws: Hex[] = [];
  let nonce = await node.public.getTransactionCount({ address: borrower.address });
  for (const tx of instructions.transactions) {
    const raw = await borrower.signTransaction({
      chainId: instructions.chainId,
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      nonce: nonce++,
      gas: 200_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
    });
    const hash = await node.public.sendRawTransaction({ serializedTransaction: raw });
    const receipt = await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    expect(receipt.status).toBe("success");
    raws.push(raw);
  }
  return raws;
}

async function repayInstructions(liveKey: string, loanId: string) {
  const res = await t.request("POST", `/v1/loans/${loanId}/repay`, { headers: apiKey(liveKey) });
  expect(res.status).toBe(200);
  return res.body;
}

const loanOf = async (liveKey: string, loanId: string) => (await t.request("GET", `/v1/loans/${loanId}`, { headers: apiKey(liveKey) })).body;
const eventTypes = async (liveKey: string, loanId: string) =>
  ((await t.request("GET", `/v1/events?loanId=${loanId}`, { headers: apiKey(liveKey) })).body.data as { type: string }[]).map((e) => e.type).reverse();
const repaymentRows = (loanId: string) =>
  t.db
    .select({
      kind: settlements.kind,
      status: settlements.status,
      amount: settlements.amount,
      toAddress: settlements.toAddress,
      blockNumber: settlements.blockNumber,
    })
    .from(settlements)
    .where(and(eq(settlements.loanId, loanId)));

describe("live repayment through the non-custodial pool on Anvil", () => {
  test("live instructions name the deployment's token and pool and the tenant's COLLECTIONS wallet; without one: supported false, with the reason", async () => {
    const tenant = await liveTenant();
    const { loan } = await activeLoan(tenant);
    const r = await repayInstructions(tenant.liveKey, loan.id);
    expect(r).toMatchObject({
      chain: "POLYGON",
      supported: true,
      chainId: 137,
      token: { address: deployment.usdc },
      spender: deployment.pool,
      collections: tenant.collections,
    });

    const bare = await liveTenant({ collections: false });
    const { loan: other } = await activeLoan(bare);
    expect(await repayInstructions(bare.liveKey, other.id)).toEqual({
      chain: "POLYGON",
      supported: false,
      reason: expect.stringContaining("COLLECTIONS wallet on POLYGON"),
    });
  });

  test("the borrower signs approve and repay: after the confirmations the loan is REPAID, the COLLECTIONS wallet holds the total, the pool nothing", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    const total = BigInt(instructions.amountUnits);
    await signAndSend(borrower, instructions);

    // Not deep enough yet: nothing is credited, and the cursor stays below the repay's block.
    const early = await poll();
    expect(early.error).toBeUndefined();
    expect(early.payments).toBe(0);
    expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("ACTIVE");

    await node.test.mine({ blocks: CONFIRMATIONS });
    const report = await poll();
    expect(report).toMatchObject({ payments: 1, unmatched: 0, reorg: null });
    expect(report.error).toBeUndefined();
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect(await balanceOf(tenant.collections as Address)).toBe(total);
    expect(await balanceOf(deployment.pool)).toBe(0n);
    expect(await balanceOf(borrower.address)).toBe(USDC(200) - total);
    expect((await repaymentRows(loan.id)).filter((s) => s.kind !== "FUNDING")).toEqual([
      expect.objectContaining({ kind: "REPAYMENT", status: "CONFIRMED", amount: total, toAddress: tenant.collections }),
    ]);
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e === "loan.repaid")).toHaveLength(1);

    // Polling again changes nothing.
    await node.test.mine({ blocks: 3 });
    expect(await poll()).toMatchObject({ payments: 0, unmatched: 0, reorg: null });
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e === "loan.repaid")).toHaveLength(1);
  });

  test("a repayment made before the deadline, still in its confirmations when the sweep runs: the loan is judged only as far as the chain is read, so it is REPAID, never overdue or defaulted; an unpaid loan due before the block read is defaulted", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    const { loan: unpaid } = await activeLoan(tenant);
    await poll();
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    await signAndSend(borrower, instructions);
    const paidAt = Number((await node.public.getBlock()).timestamp) * 1000;
    const day = 86_400_000;
    // Paid a second before it fell due; the other loan fell due 4 days before (3 days' grace), unpaid.
    await t.db
      .update(loans)
      .set({ dueAt: new Date(paidAt + 1000), gracePeriodDays: 3 })
      .where(eq(loans.id, loan.id));
    await t.db
      .update(loans)
      .set({ dueAt: new Date(paidAt - 4 * day), gracePeriodDays: 3 })
      .where(eq(loans.id, unpaid.id));
    const start = t.clock.now();
    try {
      // The service's clock 4 days on: past both loans' grace.
      t.clock.set(new Date(paidAt + 4 * day));
      expect((await poll()).payments).toBe(0);
      const [cursor] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
      const cursorBlock = await node.public.getBlock({ blockNumber: BigInt(cursor!.lastBlock) });
      expect(cursor!.readThroughAt?.getTime()).toBe(Number(cursorBlock.timestamp) * 1000);
      expect(cursor!.readThroughAt!.getTime()).toBeLessThan(paidAt + 1000);
      const sweep = () => sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock });
      expect(await sweep()).toMatchObject({ failed: 0 });
      expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("ACTIVE");
      expect(await loanOf(tenant.liveKey, unpaid.id)).toMatchObject({ status: "DEFAULTED", overdue: true });

      await node.test.mine({ blocks: CONFIRMATIONS });
      expect(await poll()).toMatchObject({ payments: 1 });
      expect(await sweep()).toMatchObject({ failed: 0 });
      expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID", overdue: false, lateFee: "0.00" });
      const types = await eventTypes(tenant.liveKey, loan.id);
      expect(types).toContain("loan.repaid");
      expect(types.filter((e) => e === "loan.overdue" || e === "loan.defaulted")).toEqual([]);
      expect((await eventTypes(tenant.liveKey, unpaid.id)).filter((e) => e === "loan.overdue" || e === "loan.defaulted")).toEqual([
        "loan.overdue",
        "loan.defaulted",
      ]);
    } finally {
      t.clock.set(start);
    }
  });

  test("a COLLECTIONS wallet verified while a poll is under way: the poll's later pages read it, so a payment made to it as instructed is credited (it was filtered out for good and the loan defaulted)", async () => {
    const tenant = await liveTenant({ collections: false });
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    await node.test.mine({ blocks: 5 });
    const collections = fresh();
    let first = true;
    const midPoll: EvmChainReader = {
      ...reader,
      read: async (input) => {
        if (!first) return reader.read(input);
        first = false;
        // During the poll's first page: the merchant verifies its wallet, the borrower pays as instructed, and it is confirmed.
        await verifiedEvmWallet(t, tenant.token, { chain: "POLYGON", role: "COLLECTIONS", account: collections });
        const instructions = await repayInstructions(tenant.liveKey, loan.id);
        expect(instructions).toMatchObject({ supported: true, collections: collections.address });
        await signAndSend(borrower, instructions);
        await node.test.mine({ blocks: CONFIRMATIONS });
        // This page reads one block: the payment is for a later page of the same poll.
        return reader.read({ ...input, maxBlocks: 1 });
      },
    };
    expect(await pollEvmChain(listenerDeps(), { settings, reader: midPoll })).toMatchObject({ payments: 1 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
  });

  test("a reorg orphaning the repay un-credits it (ACTIVE, settlement REVERSED, loan.repayment_reversed); re-mined in another block it is credited once again", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    const total = BigInt(instructions.amountUnits);
    await poll();
    const [{ poolId }] = (await t.db.select({ poolId: loans.poolId }).from(loans).where(eq(loans.id, loan.id))) as [{ poolId: string }];
    const poolAvailable = async () =>
      (await t.db.select({ available: liquidityPools.available }).from(liquidityPools).where(eq(liquidityPools.id, poolId)))[0]!.available;
    const lent = await poolAvailable();
    const snapshot = await node.test.snapshot();
    const raws = await signAndSend(borrower, instructions);
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1 });
    expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("REPAID");
    const [firstCredit] = (await repaymentRows(loan.id)).filter((s) => s.kind === "REPAYMENT");
    // The repayment went to COLLECTIONS: the live pool, which mirrors the DISBURSEMENT wallet, is as it was.
    expect(await poolAvailable()).toBe(lent);
    // Its DISBURSEMENT wallet lent everything meanwhile, as a refresh reads it (an audit's reversal then broke the
    // pool's CHECK, available - applied < 0, and the failed batch held back the chain's listener for every tenant).
    await t.db.update(liquidityPools).set({ available: 0n }).where(eq(liquidityPools.id, poolId));

    // The chain that wins has other blocks where the repay was: empty ones, longer than before.
    await node.test.revert({ id: snapshot });
    await node.test.mine({ blocks: 5 });
    const undone = await poll();
    expect(undone.error).toBeUndefined();
    expect(undone.reorg).toMatchObject({ reversed: 1 });
    expect(await poolAvailable()).toBe(0n);
    expect(undone.payments).toBe(0);
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    expect((await repaymentRows(loan.id)).filter((s) => s.kind === "REPAYMENT")).toEqual([
      expect.objectContaining({ status: "REVERSED", blockNumber: firstCredit!.blockNumber }),
    ]);
    expect(await balanceOf(tenant.collections as Address)).toBe(0n);

    // The borrower's signed transactions are mined again, in later blocks.
    for (const raw of raws)
      await node.public.waitForTransactionReceipt({ hash: await node.public.sendRawTransaction({ serializedTransaction: raw }), pollingInterval: 20 });
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1, reorg: null });
    expect(await poll()).toMatchObject({ payments: 0, reorg: null });

    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    const rows = (await repaymentRows(loan.id)).filter((s) => s.kind === "REPAYMENT");
    expect(rows.filter((s) => s.status === "CONFIRMED")).toEqual([expect.objectContaining({ amount: total, toAddress: tenant.collections })]);
    expect(rows.filter((s) => s.status === "CONFIRMED")[0]!.blockNumber).not.toBe(firstCredit!.blockNumber);
    expect(rows.filter((s) => s.status === "REVERSED")).toHaveLength(1);
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e.startsWith("loan.repa"))).toEqual([
      "loan.repaid",
      "loan.repayment_reversed",
      "loan.repaid",
    ]);
    expect(await balanceOf(tenant.collections as Address)).toBe(total);
    expect(await balanceOf(deployment.pool)).toBe(0n);
  });
});

describe("a reorg after a recovery", () => {
  test("a DEFAULTED loan repaid and then orphaned goes back to DEFAULTED, late fees and all", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant, USDC(1_000));
    const now = t.clock.now().getTime();
    const day = 86_400_000;
    await t.db
      .update(loans)
      .set({ status: "DEFAULTED", dueAt: new Date(now - 10 * day), overdueAt: new Date(now - 10 * day), defaultedAt: new Date(now - 5 * day) })
      .where(eq(loans.id, loan.id));
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    expect(BigInt(instructions.amountUnits)).toBeGreaterThan(USDC(102));
    await poll();
    const snapshot = await node.test.snapshot();
    await signAndSend(borrower, instructions);
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1 });
    expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("REPAID");

    await node.test.revert({ id: snapshot });
    await node.test.mine({ blocks: 4 });
    expect((await poll()).reorg).toMatchObject({ reversed: 1 });
    const back = await loanOf(tenant.liveKey, loan.id);
    expect(back).toMatchObject({ status: "DEFAULTED", amountPaid: "0.00" });
    // What is due is due again, as before the orphaned repayment.
    expect((await repayInstructions(tenant.liveKey, loan.id)).amountUnits).toBe(instructions.amountUnits);
  });
});

describe("a COLLECTIONS wallet deleted after its instructions went out", () => {
  test(`a borrower who pays as instructed is credited, other money there kept as unmatched; ${LISTEN_AFTER_DELETE_DAYS} days after the delete the wallet is no longer read (an audit's payment was dropped)`, async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant, USDC(1_000));
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    await poll();
    expect((await t.request("DELETE", `/v1/wallets/${tenant.collectionsId}`, { headers: bearer(tenant.token) })).status).toBe(204);
    // No new instructions name it (the tenant has no other COLLECTIONS wallet on POLYGON).
    const after = await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(tenant.liveKey) });
    expect(after.body).toMatchObject({ supported: false, chain: "POLYGON" });

    await signAndSend(borrower, instructions);
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1, unmatched: 0 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID", amountDue: "0.00" });

    const transfer = async () => {
      const hash = await node.wallet(borrower).sendTransaction({
        account: borrower,
        chain: null,
        to: deployment.usdc,
        data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [tenant.collections as Address, USDC(1)] }),
        gas: 200_000n,
      });
      expect((await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success");
      await node.test.mine({ blocks: CONFIRMATIONS });
    };
    await transfer();
    expect(await poll()).toMatchObject({ payments: 0, unmatched: 1 });
    // Long after the delete, the listener no longer reads the address: a transfer there is not seen at all.
    const base = t.clock.now().getTime();
    try {
      t.clock.set(new Date(base + (LISTEN_AFTER_DELETE_DAYS + 1) * 86_400_000));
      await transfer();
      expect(await poll()).toMatchObject({ payments: 0, unmatched: 0 });
    } finally {
      t.clock.set(new Date(base));
    }
  });
});

describe("spoofing on Anvil: nothing but our pool's backed Repaid to the lender's COLLECTIONS wallet credits", () => {
  test("a look-alike token, a pool clone, a plain transfer, a repay to another address, another lender's wallet; a reverted repay is only a failure", async () => {
    const tenant = await liveTenant();
    const other = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant, USDC(1_000));
    const total = BigInt((await repayInstructions(tenant.liveKey, loan.id)).amountUnits);
    const { usdc, pool } = rehearsalContracts();
    const deployer = privateKeyToAccount(generatePrivateKey());
    await node.test.setBalance({ address: deployer.address, value: 10n ** 18n });
    const deploy = async (contract: typeof usdc, args: unknown[]) => {
      const hash = await node.wallet(deployer).deployContract({ abi: contract.abi, bytecode: contract.bytecode, args, account: deployer, chain: null });
      return (await node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 })).contractAddress!;
    };
    const fakeUsdc = await deploy(usdc, ["USD Coin", "USDC"]);
    const fakePool = await deploy(pool, [fakeUsdc, deployer.address]);
    const clonePool = await deploy(pool, [deployment.usdc, deployer.address]);
    const wallet = node.wallet(borrower);
    const send = async (to: Address, data: Hex) => {
      const hash = await wallet.sendTransaction({ account: borrower, chain: null, to, data, gas: 200_000n });
      return node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    };
    const approve = (spender: Address, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] });
    const repay = (collections: Address, amount: bigint) =>
      encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loan.id), collections, amount] });
    const collections = tenant.collections as Address;
    await poll();

    // 1. A look-alike token through its own pool, paid to the real COLLECTIONS wallet.
    await mintUsdc(node, { ...deployment, usdc: fakeUsdc }, borrower.address, total);
    await send(fakeUsdc, approve(fakePool, total));
    expect((await send(fakePool, repay(collections, total))).status).toBe("success");
    // 2. A clone of the pool at another address, moving the real token to the COLLECTIONS wallet.
    await send(deployment.usdc, approve(clonePool, total));
    const cloned = await send(clonePool, repay(collections, total));
    expect(cloned.status).toBe("success");
    // 3. A plain transfer of the real token to the COLLECTIONS wallet.
    const plain = await send(deployment.usdc, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [collections, total] }));
    // 4. Our pool, but paying an address that is nobody's COLLECTIONS wallet.
    await send(deployment.usdc, approve(deployment.pool, total));
    const elsewhere = fresh().address;
    expect((await send(deployment.pool, repay(elsewhere, total))).status).toBe("success");
    // 5. Our pool, paying another lender's COLLECTIONS wallet for this loan.
    await send(deployment.usdc, approve(deployment.pool, total));
    const misdirected = await send(deployment.pool, repay(other.collections as Address, total));
    expect(misdirected.status).toBe("success");
    // 6. A reverted repay (no allowance left): the borrower's failed repayment, which moves nothing.
    const reverted = await send(deployment.pool, repay(collections, total));
    expect(reverted.status).toBe("reverted");

    await node.test.mine({ blocks: CONFIRMATIONS });
    const report = await poll();
    expect(report.error).toBeUndefined();
    expect(report.payments).toBe(0);
    expect(report.failures).toBe(1);
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    expect((await repaymentRows(loan.id)).filter((s) => s.kind !== "FUNDING")).toEqual([
      expect.objectContaining({ kind: "REPAYMENT", status: "FAILED", amount: total, toAddress: collections, blockNumber: Number(reverted.blockNumber) }),
    ]);
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e.startsWith("loan.repa"))).toEqual(["loan.repayment_failed"]);

    // Money that did reach a COLLECTIONS wallet is kept as unmatched for that wallet's lender, never for the loan.
    const kept = await t.db.select().from(unmatchedPayments).where(eq(unmatchedPayments.chain, "POLYGON"));
    const mine = kept.filter((u) => u.tenantId === tenant.tenantId);
    expect(mine.map((u) => u.txHash).sort()).toEqual([cloned.transactionHash, plain.transactionHash].sort());
    for (const u of mine) expect(u).toMatchObject({ toAddress: collections, amount: total, claimedLoanId: null, token: getAddress(deployment.usdc) });
    const theirs = kept.filter((u) => u.tenantId === other.tenantId);
    // Another lender is never shown this lender's loan id.
    expect(theirs).toEqual([expect.objectContaining({ txHash: misdirected.transactionHash, toAddress: other.collections, claimedLoanId: null })]);
    const listed = await t.request("GET", "/v1/settlements/unmatched", { headers: apiKey(tenant.liveKey) });
    expect(listed.status).toBe(200);
    expect((listed.body.data as { txHash: string }[]).map((u) => u.txHash).sort()).toEqual(mine.map((u) => u.txHash).sort());
  });
});

describe("a failed repayment on a live chain (a reverted repay has no logs: the blocks are read whole)", () => {
  const repayData = (loanId: string, collections: Address, amount: bigint) =>
    encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "repay", args: [loanIdToBytes32(loanId), collections, amount] });
  /** Sends `data` to the pool from `from` with a fixed gas limit (so a call that will revert is still mined, as a wallet may send it). */
  const sendToPool = async (from: PrivateKeyAccount, data: Hex) => {
    const hash = await node.wallet(from).sendTransaction({ account: from, chain: null, to: deployment.pool, data, gas: 200_000n });
    return node.public.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  };
  const eventsOf = async (liveKey: string, loanId: string) =>
    (await t.request("GET", `/v1/events?loanId=${loanId}`, { headers: apiKey(liveKey) })).body.data as { type: string; data: Record<string, unknown> }[];

  test("the borrower's repay without allowance reverts: a FAILED settlement and loan.repayment_failed, once; the loan stays ACTIVE and is repaid afterwards", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    const total = BigInt(instructions.amountUnits);
    const collections = tenant.collections as Address;
    // The repay alone, without the approve the instructions put before it.
    const failed = await sendToPool(borrower, repayData(loan.id, collections, total));
    expect(failed.status).toBe("reverted");

    // Not yet deep enough: nothing.
    expect(await poll()).toMatchObject({ failures: 0 });
    await node.test.mine({ blocks: CONFIRMATIONS });
    const report = await poll();
    expect(report.error).toBeUndefined();
    expect(report).toMatchObject({ payments: 0, failures: 1, unmatched: 0 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00", amountDue: loan.totalDue });
    expect((await repaymentRows(loan.id)).filter((s) => s.kind !== "FUNDING")).toEqual([
      { kind: "REPAYMENT", status: "FAILED", amount: total, toAddress: collections, blockNumber: Number(failed.blockNumber) },
    ]);
    const events = await eventsOf(tenant.liveKey, loan.id);
    expect(events.filter((e) => e.type === "loan.repayment_failed")).toHaveLength(1);
    expect(JSON.stringify(events.find((e) => e.type === "loan.repayment_failed")!.data)).toContain(loan.id);

    // Polled again (and its blocks searched again after the cursor's reset), it is not recorded twice.
    await node.test.mine({ blocks: 2 });
    expect(await poll()).toMatchObject({ failures: 0 });
    await t.db
      .update(chainCursors)
      .set({ revertsScannedTo: Number(failed.blockNumber) - 1 })
      .where(eq(chainCursors.chain, "POLYGON"));
    expect(await poll()).toMatchObject({ failures: 1 });
    expect((await eventsOf(tenant.liveKey, loan.id)).filter((e) => e.type === "loan.repayment_failed")).toHaveLength(1);
    expect((await repaymentRows(loan.id)).filter((s) => s.status === "FAILED")).toHaveLength(1);

    // Its repayment instructions still hold: signed as given, they repay the loan.
    await signAndSend(borrower, await repayInstructions(tenant.liveKey, loan.id));
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e.startsWith("loan.repa"))).toEqual(["loan.repayment_failed", "loan.repaid"]);
  });

  test("the borrower's reverted repay claiming more than any database stores (2^200 units): ignored, never a failure that cannot be recorded (a review saw three held for good, retried hourly)", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const failed = await sendToPool(borrower, repayData(loan.id, tenant.collections as Address, 2n ** 200n));
    expect(failed.status).toBe("reverted");
    await node.test.mine({ blocks: CONFIRMATIONS });
    const report = await poll();
    expect(report.error).toBeUndefined();
    expect(report.revertScanError).toBeUndefined();
    expect(report).toMatchObject({ failures: 0, unmatched: 0 });
    expect(report.held).toBeUndefined();
    expect(await t.db.select().from(heldPayments)).toEqual([]);
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    expect((await repaymentRows(loan.id)).filter((s) => s.kind !== "FUNDING")).toEqual([]);
  });

  test("a stranger's reverted repay naming the loan, a borrower's reverted repay to an address that is no COLLECTIONS wallet, a failed call of another function: nothing", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const collections = tenant.collections as Address;
    const stranger = await withGas(fresh());
    // Anyone can name any loan in a call that reverts, for the price of gas: the merchant is not told of it.
    expect((await sendToPool(stranger, repayData(loan.id, collections, USDC(1)))).status).toBe("reverted");
    expect((await sendToPool(borrower, repayData(loan.id, fresh().address, USDC(1)))).status).toBe("reverted");
    expect((await sendToPool(borrower, repayData(loan.id, collections, 0n))).status).toBe("reverted");
    const fund = encodeFunctionData({ abi: SVC_POOL_ABI, functionName: "fund", args: [loanIdToBytes32(loan.id), borrower.address, 1n] });
    expect((await sendToPool(borrower, fund)).status).toBe("reverted");
    await node.test.mine({ blocks: CONFIRMATIONS });
    const report = await poll();
    expect(report.error).toBeUndefined();
    // The zero-amount repay is the borrower's own: a failure of 0.00, reported as such.
    expect(report).toMatchObject({ payments: 0, failures: 1, unmatched: 0 });
    expect((await repaymentRows(loan.id)).filter((s) => s.kind !== "FUNDING")).toEqual([expect.objectContaining({ status: "FAILED", amount: 0n })]);
    expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("ACTIVE");
  });

  test("the search failing (an RPC error) holds up no credit: the repayment is credited, the chain does not back off, the search's cursor stays and it goes on next poll", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const [before] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    const failed = await sendToPool(borrower, repayData(loan.id, tenant.collections as Address, USDC(5)));
    await signAndSend(borrower, await repayInstructions(tenant.liveKey, loan.id));
    await node.test.mine({ blocks: CONFIRMATIONS });
    const keyed = "https://polygon.rpc.example/v2/SECRET-PROVIDER-KEY";
    const broken: EvmChainReader = {
      ...reader,
      failedRepays: async () => {
        throw new HttpRequestError({ status: 503, url: keyed, body: { error: "unavailable" } });
      },
    };
    const report = await pollEvmChain(listenerDeps(), { settings, reader: broken });
    expect(report.error).toBeUndefined();
    expect(report.revertScanError).toBeString();
    expect(report.revertScanError).not.toContain("SECRET-PROVIDER-KEY");
    expect(report).toMatchObject({ payments: 1, failures: 0 });
    expect((await loanOf(tenant.liveKey, loan.id)).status).toBe("REPAID");
    const [after] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(after).toMatchObject({ failures: 0, backoffUntil: null, revertsScannedTo: before!.revertsScannedTo });
    expect(after!.lastBlock).toBeGreaterThan(before!.lastBlock);

    // The next poll's search reads those blocks: the loan is REPAID by then, so the earlier failure is history, not news.
    const next = await poll();
    expect(next.revertScanError).toBeUndefined();
    const [caught] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(caught!.revertsScannedTo).toBe(caught!.lastBlock);
    expect(Number(failed.blockNumber)).toBeLessThanOrEqual(caught!.revertsScannedTo!);
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e.startsWith("loan.repa"))).toEqual(["loan.repaid"]);
  });

  test("receipts are asked only of calls by the loan's own borrower, at most MAX_RECEIPTS_PER_LOAN a loan per poll: strangers' reverting calls cost nothing (an audit made one poll ask 1,100)", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const collections = tenant.collections as Address;
    const stranger = await withGas(fresh());
    for (let i = 0; i < 20; i++) expect((await sendToPool(stranger, repayData(loan.id, collections, USDC(1)))).status).toBe("reverted");
    // A made-up loan id too: no loan, no receipt.
    for (let i = 0; i < 5; i++) expect((await sendToPool(stranger, repayData(crypto.randomUUID(), collections, USDC(1)))).status).toBe("reverted");
    for (let i = 0; i < 5; i++) expect((await sendToPool(borrower, repayData(loan.id, collections, USDC(1)))).status).toBe("reverted");
    await node.test.mine({ blocks: CONFIRMATIONS });
    let receipts = 0;
    const counting = evmChainReader(settings, {
      ...node.public,
      getBlockNumber: node.public.getBlockNumber,
      getLogs: node.public.getLogs,
      getBlock: node.public.getBlock,
      getTransactionReceipt: ((args: { hash: Hex }) => {
        receipts++;
        return node.public.getTransactionReceipt(args);
      }) as typeof node.public.getTransactionReceipt,
    });
    const report = await pollEvmChain(listenerDeps(), { settings, reader: counting });
    expect(report.error).toBeUndefined();
    expect(report.revertScanError).toBeUndefined();
    expect(receipts).toBe(MAX_RECEIPTS_PER_LOAN);
    expect(report.failures).toBe(MAX_RECEIPTS_PER_LOAN);
    // Each is its own transaction: recorded, but the merchant is not flooded beyond the cap per poll.
    expect((await repaymentRows(loan.id)).filter((r) => r.status === "FAILED")).toHaveLength(MAX_RECEIPTS_PER_LOAN);
  });

  test("far behind the log cursor (an early start block, a long outage) the search skips ahead to MAX_REVERT_SCAN_LAG behind it, and says so", async () => {
    // A reader double on another chain (its own cursor row): the log reading is done, the search far behind.
    const base: LiveChainSettings = { ...settings, chain: "BASE" };
    await t.db
      .insert(chainCursors)
      .values({ chain: "BASE", lastBlock: 20_000, revertsScannedTo: 5_000, updatedAt: t.clock.now() })
      .onConflictDoUpdate({ target: chainCursors.chain, set: { lastBlock: 20_000, revertsScannedTo: 5_000 } });
    await t.db.delete(chainBlocks).where(eq(chainBlocks.chain, "BASE"));
    const searched: { afterBlock: number; toBlock: number }[] = [];
    const double: EvmChainReader = {
      read: async ({ afterBlock }) => ({ transactions: [], head: afterBlock + 12, scannedTo: afterBlock + 10, scannedToHash: "0xabc", scannedToTime: null }),
      blockHashes: async (numbers) => new Map(numbers.map((n) => [n, "0xabc"])),
      failedRepays: async ({ afterBlock, toBlock }) => {
        searched.push({ afterBlock, toBlock });
        return [];
      },
    };
    const report = await pollEvmChain(listenerDeps(), { settings: base, reader: double });
    expect(report.error).toBeUndefined();
    expect(report.lastBlock).toBe(20_010);
    expect(searched).toEqual([{ afterBlock: 20_010 - MAX_REVERT_SCAN_LAG, toBlock: 20_010 - MAX_REVERT_SCAN_LAG + MAX_REVERT_SCAN_BLOCKS }]);
    expect(report.revertScanSkipped).toBe(20_010 - MAX_REVERT_SCAN_LAG - 5_000);
    const [row] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "BASE"));
    expect(row!.revertsScannedTo).toBe(20_010 - MAX_REVERT_SCAN_LAG + MAX_REVERT_SCAN_BLOCKS);
    // Within the lag, nothing is skipped.
    const again = await pollEvmChain(listenerDeps(), { settings: base, reader: double });
    expect(again.revertScanSkipped).toBeUndefined();
    expect(searched[1]).toEqual({ afterBlock: row!.revertsScannedTo!, toBlock: row!.revertsScannedTo! + MAX_REVERT_SCAN_BLOCKS });
    await t.db.delete(chainCursors).where(eq(chainCursors.chain, "BASE"));
  });

  test("the search reads at most MAX_REVERT_SCAN_BLOCKS a poll, behind the log cursor, and catches up; a reorg sends it back", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await poll();
    const [start] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(start!.revertsScannedTo).toBe(start!.lastBlock);
    const failed = await sendToPool(borrower, repayData(loan.id, tenant.collections as Address, USDC(5)));
    await node.test.mine({ blocks: MAX_REVERT_SCAN_BLOCKS + 50 });
    const blocksRead: bigint[] = [];
    const counting = evmChainReader(settings, {
      ...node.public,
      getBlockNumber: node.public.getBlockNumber,
      getLogs: node.public.getLogs,
      getTransactionReceipt: node.public.getTransactionReceipt,
      getBlock: ((args: { blockNumber: bigint; includeTransactions?: boolean }) => {
        if (args.includeTransactions) blocksRead.push(args.blockNumber);
        return node.public.getBlock(args as never);
      }) as typeof node.public.getBlock,
    });
    const first = await pollEvmChain(listenerDeps(), { settings, reader: counting });
    expect(first).toMatchObject({ failures: 1 });
    const [after] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(after!.lastBlock).toBe(Number(await node.public.getBlockNumber({ cacheTime: 0 })) - CONFIRMATIONS);
    expect(after!.revertsScannedTo).toBe(start!.lastBlock + MAX_REVERT_SCAN_BLOCKS);
    expect(blocksRead).toHaveLength(MAX_REVERT_SCAN_BLOCKS);
    expect(new Set(blocksRead).size).toBe(MAX_REVERT_SCAN_BLOCKS);
    expect(Number(blocksRead.reduce((a, b) => (a < b ? a : b)))).toBe(start!.lastBlock + 1);
    blocksRead.length = 0;
    await pollEvmChain(listenerDeps(), { settings, reader: counting });
    const [caught] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(caught!.revertsScannedTo).toBe(caught!.lastBlock);
    expect(blocksRead.length).toBeGreaterThanOrEqual(50);
    expect(blocksRead.length).toBeLessThan(MAX_REVERT_SCAN_BLOCKS);
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e === "loan.repayment_failed")).toHaveLength(1);
    expect(Number(failed.blockNumber)).toBeLessThanOrEqual(caught!.lastBlock);

    // A reorg below both cursors takes the search back with the log cursor.
    const snapshot = await node.test.snapshot();
    await node.test.mine({ blocks: 3 });
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    await signAndSend(borrower, instructions);
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await poll()).toMatchObject({ payments: 1 });
    const [beforeReorg] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    await node.test.revert({ id: snapshot });
    await node.test.mine({ blocks: 10 });
    const undone = await poll();
    expect(undone.reorg).toMatchObject({ reversed: 1 });
    const lastGood = undone.reorg!.fromBlock - 1;
    expect(lastGood).toBeLessThan(beforeReorg!.revertsScannedTo!);
    const [back] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    // From the last good block again, as the logs are read again from there.
    expect(back!.revertsScannedTo).toBe(Math.min(lastGood + MAX_REVERT_SCAN_BLOCKS, back!.lastBlock));
    // The failure seen again on the way is not recorded twice.
    expect((await eventTypes(tenant.liveKey, loan.id)).filter((e) => e === "loan.repayment_failed")).toHaveLength(1);
  });
});

describe("a payment that cannot be applied is held; the chain's cursor moves on for every other (one such payment stopped the listener for every tenant)", () => {
  /** The listener's writer, failing for the loans in `broken` as a loan's object that cannot apply a payment would. */
  const broken = new Set<string>();
  const flakyDeps = () => ({
    ...listenerDeps(),
    writer: {
      run: async (cmd: Parameters<typeof t.deps.writer.run>[0]) => {
        if ("loanId" in cmd && broken.has(cmd.loanId)) throw new Error(`the loan ${cmd.loanId} could not apply it (simulated)`);
        return t.deps.writer.run(cmd);
      },
    },
  });
  const flakyPoll = () => pollEvmChain(flakyDeps(), { settings, reader });
  // The tests move the clock past back-offs; sessions are checked against the system clock, so each puts it back.
  let base = 0;
  beforeEach(() => {
    base = t.clock.now().getTime();
  });
  afterEach(() => t.clock.set(new Date(base)));
  const heldRows = () => t.db.select().from(heldPayments).where(eq(heldPayments.chain, "POLYGON"));
  /** A live loan whose repayment is held (its writer failing), with a chain snapshot from just before the repayment was sent. */
  async function heldRepayment() {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    const instructions = await repayInstructions(tenant.liveKey, loan.id);
    await flakyPoll();
    const snapshot = await node.test.snapshot();
    broken.add(loan.id);
    const raws = await signAndSend(borrower, instructions);
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await flakyPoll()).toMatchObject({ held: 1 });
    return { tenant, loan, snapshot, raws };
  }

  test("held with its reason while another tenant's repayment in the same poll is credited; tried again after a back-off that doubles; credited once when it applies, and released", async () => {
    const first = await liveTenant();
    const second = await liveTenant();
    const stuck = await activeLoan(first);
    const fine = await activeLoan(second);
    broken.add(stuck.loan.id);
    await signAndSend(stuck.borrower, await repayInstructions(first.liveKey, stuck.loan.id));
    await signAndSend(fine.borrower, await repayInstructions(second.liveKey, fine.loan.id));
    await node.test.mine({ blocks: CONFIRMATIONS });

    const report = await flakyPoll();
    expect(report.error).toBeUndefined();
    expect(report).toMatchObject({ payments: 1, held: 1, heldError: expect.stringContaining("could not apply it") });
    expect(await loanOf(second.liveKey, fine.loan.id)).toMatchObject({ status: "REPAID" });
    expect(await loanOf(first.liveKey, stuck.loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    const [cursor] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(cursor).toMatchObject({ failures: 0, backoffUntil: null });
    const [held] = await heldRows();
    expect(held).toMatchObject({ kind: "payment", attempts: 1, lastError: expect.stringContaining("could not apply it") });
    expect(cursor!.lastBlock).toBeGreaterThanOrEqual(held!.blockNumber);
    expect(held!.nextAttemptAt).toEqual(new Date(t.clock.now().getTime() + heldBackoffMs(1)));
    // The operator sees it, with why and when it is tried next; a merchant's key or none does not.
    const listed = await t.request("GET", "/v1/operator/held-payments", { headers: OPERATOR_HEADERS });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        chain: "POLYGON",
        txHash: held!.txHash,
        logIndex: held!.logIndex,
        kind: "payment",
        tenantId: null,
        loanId: stuck.loan.id,
        to: getAddress(first.collections),
        amount: stuck.loan.totalDue,
        blockNumber: held!.blockNumber,
        attempts: 1,
        lastError: expect.stringContaining("could not apply it"),
        nextAttemptAt: held!.nextAttemptAt.toISOString(),
        createdAt: held!.createdAt.toISOString(),
      },
    ]);
    expect((await t.request("GET", "/v1/operator/held-payments", { headers: apiKey(first.liveKey) })).status).toBe(401);
    expect((await t.request("GET", "/v1/operator/held-payments")).status).toBe(401);

    // Not due yet: not tried.
    expect(await flakyPoll()).toMatchObject({ payments: 0 });
    expect((await heldRows())[0]!.attempts).toBe(1);
    // Due, still failing: the wait doubles.
    t.clock.advance(heldBackoffMs(1));
    expect(await flakyPoll()).toMatchObject({ payments: 0, held: 1 });
    expect(await heldRows()).toEqual([expect.objectContaining({ attempts: 2, nextAttemptAt: new Date(t.clock.now().getTime() + heldBackoffMs(2)) })]);
    expect(heldBackoffMs(2)).toBe(2 * heldBackoffMs(1));

    // The loan's object works again: credited once, with the block's time, and no longer held.
    broken.delete(stuck.loan.id);
    t.clock.advance(heldBackoffMs(2));
    expect(await flakyPoll()).toMatchObject({ payments: 1, heldApplied: 1 });
    expect(await heldRows()).toEqual([]);
    expect(await loanOf(first.liveKey, stuck.loan.id)).toMatchObject({ status: "REPAID" });
    expect((await eventTypes(first.liveKey, stuck.loan.id)).filter((e) => e === "loan.repaid")).toHaveLength(1);
    expect((await repaymentRows(stuck.loan.id)).filter((r) => r.kind === "REPAYMENT")).toEqual([expect.objectContaining({ status: "CONFIRMED" })]);
    expect(await flakyPoll()).toMatchObject({ payments: 0 });
    expect((await eventTypes(second.liveKey, fine.loan.id)).filter((e) => e === "loan.repaid")).toHaveLength(1);
  });

  test("one poll of a chain at a time: a poll that starts while another holds the chain does nothing, so a reorg found mid-retry is undone by the next poll, never by one racing the retry (a held payment was credited from an orphaned block and never reversed)", async () => {
    const { tenant, loan, snapshot } = await heldRepayment();
    broken.delete(loan.id);
    t.clock.advance(heldBackoffMs(1));

    // While the held payment is being applied, its block is orphaned and another poll starts.
    let racing: Awaited<ReturnType<typeof poll>> | null = null;
    const racingDeps = {
      ...listenerDeps(),
      writer: {
        run: async (cmd: Parameters<typeof t.deps.writer.run>[0]) => {
          if (!racing && "loanId" in cmd && cmd.loanId === loan.id) {
            await node.test.revert({ id: snapshot });
            await node.test.mine({ blocks: 5 });
            racing = await poll();
          }
          return t.deps.writer.run(cmd);
        },
      },
    };
    expect(await pollEvmChain(racingDeps, { settings, reader })).toMatchObject({ heldApplied: 1 });
    expect(racing).toMatchObject({ skipped: "another poll of this chain is running", reorg: null });
    // The next poll sees the orphaned block and un-credits the payment.
    const next = await poll();
    expect(next.reorg).toMatchObject({ reversed: 1 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
    expect((await repaymentRows(loan.id)).filter((r) => r.kind === "REPAYMENT")).toEqual([expect.objectContaining({ status: "REVERSED" })]);
    const [cursor] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(cursor).toMatchObject({ leaseId: null, leaseUntil: null });
  });

  test("a poll that died holding the chain holds it for LEASE_MS at most; a failed poll gives it back", async () => {
    await t.db
      .update(chainCursors)
      .set({ leaseId: "a-poll-that-died", leaseUntil: new Date(t.clock.now().getTime() + LEASE_MS) })
      .where(eq(chainCursors.chain, "POLYGON"));
    expect(await poll()).toMatchObject({ skipped: "another poll of this chain is running" });
    t.clock.advance(LEASE_MS);
    const resumed = await poll();
    expect(resumed.skipped).toBeUndefined();
    expect(resumed.error).toBeUndefined();
    const failing: EvmChainReader = { ...reader, read: async () => Promise.reject(new Error("the node is down")) };
    await node.test.mine({ blocks: 5 });
    expect(await pollEvmChain(listenerDeps(), { settings, reader: failing })).toMatchObject({ error: "the node is down" });
    const [cursor] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(cursor).toMatchObject({ leaseId: null, leaseUntil: null, failures: 1 });
    await t.db.update(chainCursors).set({ failures: 0, backoffUntil: null }).where(eq(chainCursors.chain, "POLYGON"));
  });

  test("a payment that cannot be held either (the database refuses the row) fails the poll with the cursor kept: never passed over unheld", async () => {
    const tenant = await liveTenant();
    const { loan, borrower } = await activeLoan(tenant);
    await flakyPoll();
    const [before] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    broken.add(loan.id);
    await signAndSend(borrower, await repayInstructions(tenant.liveKey, loan.id));
    await node.test.mine({ blocks: CONFIRMATIONS });
    await t.client.execute("ALTER TABLE held_payments RENAME TO held_payments_away");
    try {
      const failed = await flakyPoll();
      expect(failed.error).toContain("held_payments");
      const [after] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
      expect(after!.lastBlock).toBe(before!.lastBlock);
    } finally {
      await t.client.execute("ALTER TABLE held_payments_away RENAME TO held_payments");
      await t.db.update(chainCursors).set({ failures: 0, backoffUntil: null }).where(eq(chainCursors.chain, "POLYGON"));
      broken.delete(loan.id);
    }
    expect(await flakyPoll()).toMatchObject({ payments: 1 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
  });

  test("a reorg orphaning a held payment's block drops it: never applied from a block that is gone; re-mined, it is read and credited once", async () => {
    const { tenant, loan, snapshot, raws } = await heldRepayment();
    expect(await heldRows()).toHaveLength(1);

    await node.test.revert({ id: snapshot });
    await node.test.mine({ blocks: 5 });
    broken.delete(loan.id);
    t.clock.advance(heldBackoffMs(1));
    const undone = await flakyPoll();
    expect(undone.reorg).not.toBeNull();
    expect(undone).toMatchObject({ payments: 0 });
    expect(undone.heldApplied).toBeUndefined();
    expect(await heldRows()).toEqual([]);
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });

    for (const raw of raws)
      await node.public.waitForTransactionReceipt({ hash: await node.public.sendRawTransaction({ serializedTransaction: raw }), pollingInterval: 20 });
    await node.test.mine({ blocks: CONFIRMATIONS });
    expect(await flakyPoll()).toMatchObject({ payments: 1 });
    expect(await loanOf(tenant.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect((await repaymentRows(loan.id)).filter((r) => r.kind === "REPAYMENT")).toEqual([expect.objectContaining({ status: "CONFIRMED" })]);
  });
});

describe("reading the chain", () => {
  test("eth_getLogs in ranges of at most maxRange blocks, never past head − confirmations", async () => {
    await node.test.mine({ blocks: 30 });
    const ranges: [bigint, bigint][] = [];
    const spy = {
      ...node.public,
      getBlockNumber: node.public.getBlockNumber,
      getBlock: node.public.getBlock,
      getTransactionReceipt: node.public.getTransactionReceipt,
      getLogs: ((args: { fromBlock: bigint; toBlock: bigint }) => {
        ranges.push([args.fromBlock, args.toBlock]);
        return node.public.getLogs(args as never);
      }) as typeof node.public.getLogs,
    };
    const head = Number(await node.public.getBlockNumber({ cacheTime: 0 }));
    const read = await readEvmTransactions(settings, spy, { afterBlock: head - 25, limit: 100, collections: [fresh().address], maxRange: 4 });
    expect(read.scannedTo).toBe(head - CONFIRMATIONS);
    expect(read.head).toBe(head);
    expect(ranges.length).toBeGreaterThan(0);
    for (const [from, to] of ranges) {
      expect(to - from + 1n).toBeLessThanOrEqual(4n);
      expect(Number(to)).toBeLessThanOrEqual(head - CONFIRMATIONS);
    }
    expect(Number(ranges[0]![0])).toBe(head - 24);

    // A listener far behind reads at most `maxBlocks` per call and catches up over several.
    const capped = await readEvmTransactions(settings, node.public, { afterBlock: head - 25, limit: 100, collections: [fresh().address], maxBlocks: 10 });
    expect(capped.scannedTo).toBe(head - 15);
  });

  test("the cron job's entry polls each configured live EVM chain through viem; the generic listener refuses them", async () => {
    const reports = await pollLiveEvmChains(listenerDeps(), { POLYGON: settings });
    expect(reports).toEqual([expect.objectContaining({ chain: "POLYGON", reorg: null })]);
    expect(reports[0]!.error).toBeUndefined();
    // Without its COLLECTIONS wallets, confirmations and reorg handling a live EVM chain is never read.
    await expect(pollChain(listenerDeps(), { chain: "POLYGON", sandboxTenantId: null })).rejects.toThrow(/pollEvmChain/);
  });

  test("an RPC rate limit (HTTP 429) keeps the cursor and backs off; the poll after the back-off runs", async () => {
    await poll();
    const [before] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    // A provider URL holding its API key: the report (which the cron logs) must not carry it.
    const keyed = "https://polygon.rpc.example/v2/SECRET-PROVIDER-KEY";
    const limited: EvmChainReader = {
      read: async () => {
        throw new HttpRequestError({ status: 429, url: keyed, body: { error: "rate limited" } });
      },
      blockHashes: reader.blockHashes,
      failedRepays: reader.failedRepays,
    };
    await node.test.mine({ blocks: 5 });
    const failed = await pollEvmChain(listenerDeps(), { settings, reader: limited });
    expect(failed.rateLimited).toBe(true);
    expect(failed.error).toBeString();
    expect(failed.error).not.toContain("SECRET-PROVIDER-KEY");
    expect(failed.error).not.toContain("polygon.rpc.example");
    const [after] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(after).toMatchObject({ lastBlock: before!.lastBlock, failures: 1, backoffUntil: new Date(t.clock.now().getTime() + backoffMs(1)) });
    // Within the back-off, not even the good reader is asked.
    expect((await poll()).skipped).toContain("backing off");
    t.clock.advance(backoffMs(1));
    const resumed = await poll();
    expect(resumed.skipped).toBeUndefined();
    expect(resumed.lastBlock).toBeGreaterThan(before!.lastBlock);
    const [reset] = await t.db.select().from(chainCursors).where(eq(chainCursors.chain, "POLYGON"));
    expect(reset).toMatchObject({ failures: 0, backoffUntil: null });
    // What the listener remembers: the cursor block's hash, and the credited blocks within the window.
    const remembered = await t.db.select().from(chainBlocks).where(eq(chainBlocks.chain, "POLYGON"));
    expect(remembered.filter((b) => !b.credited).map((b) => b.blockNumber)).toEqual([reset!.lastBlock]);
  });
});
