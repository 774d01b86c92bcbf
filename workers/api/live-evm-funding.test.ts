import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_DIR } from "../../db/migration-files.ts";
import { and, eq, sql } from "drizzle-orm";
import { type Address, custom, encodeAbiParameters, erc20Abi, type Hash, type Hex, keccak256, numberToHex, type Transport } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { settlements } from "../../db/schema/loan-records.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loans as loansTable } from "../../db/schema/loans.ts";
import { wallets as walletsTable } from "../../db/schema/wallets.ts";
import { CHAIN_CONFIG } from "../../shared/chains/chain-config.ts";
import type { ChainPort } from "../../shared/chains/chain-port.ts";
import type { EvmSenders } from "../../shared/chains/evm/live/evm-send-record.ts";
import { memoryEvmSenders } from "../../shared/chains/evm/live/memory-evm-senders.ts";
import { evmLivePort } from "../../shared/chains/evm/live/evm-live-port.ts";
import {
  type AnvilNode,
  broadcastTransaction,
  deployRehearsalContracts,
  mintUsdc,
  type RehearsalDeployment,
  startAnvil,
} from "../../shared/chains/evm/testing/anvil.ts";
import { sealedSignerSource } from "../../shared/chains/live/signer-source.ts";
import { routedChainPort } from "../../shared/chains/routed-chain-port.ts";
import { simulatedChainPort } from "../../shared/chains/simulated/simulated-chain-port.ts";
import { DEV_SECRETS_KEY } from "../../shared/crypto/secret-box.ts";
import type { Chain } from "../../shared/domain/rails.ts";
import { inProcessLoanWriter } from "../../shared/loans/loan-commands.ts";
import { retryFunding } from "../../shared/sweeps/run-sweeps.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { certifiedLiveTenant, installSigner, verifiedEvmWallet } from "../../shared/testing/live-tenants.ts";
import { apiKey, createLoan } from "../../shared/testing/loan-fixtures.ts";

/**
 * Live funding on a real EVM node (issue 13 item 2): the api's loans on
 * POLYGON go through the live EVM adapter to Anvil running as chain 137,
 * with the rehearsal USDC as the chain's token and two confirmations. The
 * tenant's DISBURSEMENT wallet is an Anvil account holding minted USDC and
 * gas, its signer installed through the operator route; the borrower's
 * balance is read from the node.
 */

let t: TestApp;
let node: AnvilNode;
let deployment: RehearsalDeployment;
const responses: string[] = [];
const consoleLines: string[] = [];
const keys: Hex[] = [];

beforeAll(async () => {
  t = await createTestApp();
  node = await startAnvil({ chainId: 137 });
  deployment = await deployRehearsalContracts(node);
  // Every response body and console line, to check no signer key ever leaves the adapter.
  const request = t.request;
  t.request = async (...args: Parameters<typeof request>) => {
    const res = await request(...args);
    responses.push(JSON.stringify(res.body));
    return res;
  };
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    spyOn(console, method).mockImplementation((...args: unknown[]) => {
      consoleLines.push(args.map(String).join(" "));
    });
  }
  useAdapter();
}, 60_000);
afterAll(async () => {
  await node?.stop();
  t?.close();
});

const CONFIRMATIONS = 2;
const USDC = (amount: number) => BigInt(amount) * 1_000_000n;

/** The api's chain port and loan writer with the live adapter for POLYGON over Anvil (and the simulated chains as before). */
function useAdapter(options: { transport?: Transport; replaceAfterMs?: number; senders?: EvmSenders } = {}): ChainPort {
  const simulated = simulatedChainPort(t.simChains);
  const ports: Partial<Record<Chain, ChainPort>> = {};
  for (const chain of Object.keys(CHAIN_CONFIG) as Chain[]) if (CHAIN_CONFIG[chain].simulated) ports[chain] = simulated;
  ports.POLYGON = evmLivePort({
    settings: {
      chain: "POLYGON",
      rpcUrl: node.rpcUrl,
      apiKey: null,
      tokenAddress: deployment.usdc,
      poolAddress: deployment.pool,
      confirmations: CONFIRMATIONS,
      startBlock: 0,
    },
    signers: sealedSignerSource(t.db, DEV_SECRETS_KEY),
    env: {},
    ...options,
    senders: options.senders ?? memoryEvmSenders(),
  });
  const chain = routedChainPort(ports);
  t.deps.chain = chain;
  t.deps.writer = inProcessLoanWriter({ db: t.db, chain, clock: t.clock });
  return chain;
}

/** A certified tenant with a live key, a KYC policy, and a verified POLYGON DISBURSEMENT wallet on Anvil with an installed signer, 10 POL and `usdc`. */
async function readyTenant(usdc: bigint) {
  const m = await certifiedLiveTenant(t, "Live EVM Ltd");
  const key = generatePrivateKey();
  keys.push(key);
  const disbursement = privateKeyToAccount(key);
  await node.test.setBalance({ address: disbursement.address, value: 10n * 10n ** 18n });
  await mintUsdc(node, deployment, disbursement.address, usdc);
  await verifiedEvmWallet(t, m.token, { chain: "POLYGON", role: "DISBURSEMENT", account: disbursement });
  await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });

  const liveLoan = async (principalAmount: string) => {
    const res = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower("live-evm-borrower"), principalAmount });
    expect(res.status).toBe(201);
    return res.body as { id: string; status: string; fundingState: string; fundingTxHash: string | null; borrowerWalletAddress: Address };
  };
  return { ...m, disbursement, liveLoan };
}

const usdcOf = (address: Address) => node.public.readContract({ address: deployment.usdc, abi: erc20Abi, functionName: "balanceOf", args: [address] });
const loanOf = async (liveKey: string, id: string) => (await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(liveKey) })).body;
const eventTypes = async (liveKey: string, id: string) =>
  ((await t.request("GET", `/v1/events?loanId=${id}`, { headers: apiKey(liveKey) })).body.data as { type: string }[]).map((e) => e.type);
const fundingRows = (loanId: string) => t.db.select().from(settlements).where(eq(settlements.loanId, loanId));

/** Mines the confirmations and runs the cron's funding retry for the tenant. */
async function confirmAndRetry(tenantId: string) {
  await node.test.mine({ blocks: CONFIRMATIONS });
  await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId });
}

/** The loan is ACTIVE and FUNDED by `txHash`, its borrower holds exactly the principal, one confirmed FUNDING settlement, loan.funded once. */
async function expectFundedOnce(m: { liveKey: string }, loan: { id: string; borrowerWalletAddress: Address }, principal: bigint, txHash?: string) {
  const after = await loanOf(m.liveKey, loan.id);
  expect(after).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
  if (txHash) expect(after.fundingTxHash).toBe(txHash);
  expect(await usdcOf(loan.borrowerWalletAddress)).toBe(principal);
  const rows = (await fundingRows(loan.id)).filter((r) => r.status === "CONFIRMED");
  expect(rows.map((r) => [r.kind, r.status, r.txHash, r.amount])).toEqual([["FUNDING", "CONFIRMED", after.fundingTxHash, principal]]);
  expect((await eventTypes(m.liveKey, loan.id)).filter((type) => type === "loan.funded")).toHaveLength(1);
  const receipt = await node.public.getTransactionReceipt({ hash: after.fundingTxHash as Hash });
  expect(rows[0]!.blockNumber).toBe(Number(receipt.blockNumber));
  return after;
}

describe("live POLYGON funding on Anvil", () => {
  test("a live loan is sent from the DISBURSEMENT wallet, waits RESERVED until two blocks deep, then the cron's retry makes it ACTIVE", async () => {
    const m = await readyTenant(USDC(1_000));
    const loan = await m.liveLoan("250.00");
    expect([loan.status, loan.fundingState]).toEqual(["CREATED", "RESERVED"]);
    expect(loan.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Broadcast and mined, not yet deep enough: the money has moved on chain, the loan is not funded yet.
    const tx = await broadcastTransaction(node, loan.fundingTxHash!);
    expect(tx.from.toLowerCase()).toBe(m.disbursement.address.toLowerCase());
    expect(tx.to?.toLowerCase()).toBe(deployment.usdc.toLowerCase());
    expect(await usdcOf(loan.borrowerWalletAddress)).toBe(USDC(250));
    expect(await fundingRows(loan.id)).toEqual([]);
    expect(await eventTypes(m.liveKey, loan.id)).not.toContain("loan.funded");

    // A retry before the confirmations: still waiting, nothing sent again.
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "CREATED", fundingState: "RESERVED", fundingTxHash: loan.fundingTxHash });

    await confirmAndRetry(m.tenantId);
    await expectFundedOnce(m, loan, USDC(250), loan.fundingTxHash!);
    expect(await usdcOf(m.disbursement.address)).toBe(USDC(750));
    expect(await node.public.getTransactionCount({ address: m.disbursement.address })).toBe(1);
    // The cron again: nothing changes, nothing is sent.
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await node.public.getTransactionCount({ address: m.disbursement.address })).toBe(1);
  });

  test("20 loans created at once from one wallet: 20 transactions with nonces 0 to 19, every loan funded once", async () => {
    const m = await readyTenant(USDC(1_000));
    const created = await Promise.all(Array.from({ length: 20 }, () => m.liveLoan("10.00")));
    // Each transaction is mined in its own block, so the first ones are already deep enough when the last are sent. On a loaded
    // machine a loan may instead wait for the retry job (CI saw one in a run); it is sent then, never twice.
    const sent = created.filter((l) => l.fundingTxHash);
    expect(sent.every((l) => ["RESERVED", "FUNDED"].includes(l.fundingState))).toBe(true);
    expect(created.filter((l) => !l.fundingTxHash).every((l) => l.status === "CREATED" && l.fundingState !== "FUNDED")).toBe(true);
    expect(sent.length).toBeGreaterThanOrEqual(15);
    for (let round = 0; round < 3; round++) await confirmAndRetry(m.tenantId);
    const funded = await Promise.all(created.map((l) => expectFundedOnce(m, l, USDC(10), l.fundingTxHash ?? undefined)));
    const nonces = await Promise.all(funded.map(async (l) => (await broadcastTransaction(node, l.fundingTxHash!)).nonce));
    expect(nonces.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await node.public.getTransactionCount({ address: m.disbursement.address, blockTag: "pending" })).toBe(20);
    expect(await usdcOf(m.disbursement.address)).toBe(USDC(800));
  });

  test("a broadcast the node refuses: the loan reports the node's reason and nothing moved; the next loan takes the freed nonce; the retry funds the first with the next one", async () => {
    let refuseNext = false;
    const transport = custom({
      async request({ method, params }) {
        if (method === "eth_sendRawTransaction" && refuseNext) {
          refuseNext = false;
          throw Object.assign(new Error("txpool is full"), { code: -32000 });
        }
        return node.public.request({ method, params } as never);
      },
    });
    useAdapter({ transport });
    try {
      const m = await readyTenant(USDC(1_000));
      refuseNext = true;
      const refused = await m.liveLoan("100.00");
      expect(refused).toMatchObject({ status: "CREATED", fundingState: "NONE", fundingTxHash: null });
      const events = (await t.request("GET", `/v1/events?loanId=${refused.id}`, { headers: apiKey(m.liveKey) })).body.data as {
        type: string;
        data: { reason?: string };
      }[];
      expect(events.find((e) => e.type === "loan.funding_failed")?.data.reason).toBe(
        `the POLYGON node refused the transfer from ${m.disbursement.address}: txpool is full`,
      );
      expect(await node.public.getTransactionCount({ address: m.disbursement.address, blockTag: "pending" })).toBe(0);

      const next = await m.liveLoan("100.00");
      // Should the node still not know it after 5 s (not the automine window then), the failure says what the loan and its events said.
      const sent = await broadcastTransaction(node, next.fundingTxHash!).catch(async (error) => {
        const nextEvents = (await t.request("GET", `/v1/events?loanId=${next.id}`, { headers: apiKey(m.liveKey) })).body.data;
        const pendingNonce = await node.public.getTransactionCount({ address: m.disbursement.address, blockTag: "pending" });
        throw new Error(
          `the node does not know ${next.fundingTxHash} (${error}); loan ${JSON.stringify(next)}; events ${JSON.stringify(nextEvents)}; pending nonce ${pendingNonce}`,
        );
      });
      expect(sent.nonce).toBe(0);
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      const retried = await loanOf(m.liveKey, refused.id);
      expect(retried.fundingState).toBe("RESERVED");
      expect((await broadcastTransaction(node, retried.fundingTxHash!)).nonce).toBe(1);

      await confirmAndRetry(m.tenantId);
      await expectFundedOnce(m, next, USDC(100));
      await expectFundedOnce(m, refused, USDC(100));
      // The refused attempt is on record as a failed funding that sent nothing.
      expect((await fundingRows(refused.id)).filter((r) => r.status === "FAILED").map((r) => [r.kind, r.txHash])).toEqual([["FUNDING", null]]);
      expect(await node.public.getTransactionCount({ address: m.disbursement.address })).toBe(2);
    } finally {
      useAdapter();
    }
  });

  test("a transaction stuck in the mempool is replaced after the configured time with the same nonce and fees 12.5% higher; the loan is funded once, by the replacement", async () => {
    useAdapter({ replaceAfterMs: 60_000 });
    try {
      const m = await readyTenant(USDC(1_000));
      // From here the node mines nothing until told: the funding transaction waits in its pool.
      await node.test.setAutomine(false);
      const loan = await m.liveLoan("100.00");
      expect(loan.fundingState).toBe("RESERVED");
      const stuck = await node.public.getTransaction({ hash: loan.fundingTxHash as Hash });

      // Within the time: the retry waits on the same transaction.
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      expect((await loanOf(m.liveKey, loan.id)).fundingTxHash).toBe(loan.fundingTxHash);

      t.clock.advance(60_000);
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      const replacedHash = (await loanOf(m.liveKey, loan.id)).fundingTxHash as Hash;
      expect(replacedHash).not.toBe(loan.fundingTxHash);
      const replacement = await node.public.getTransaction({ hash: replacedHash });
      expect(replacement.nonce).toBe(stuck.nonce);
      expect(replacement.maxFeePerGas! * 1000n).toBeGreaterThanOrEqual(stuck.maxFeePerGas! * 1125n);
      expect(replacement.maxPriorityFeePerGas! * 1000n).toBeGreaterThanOrEqual(stuck.maxPriorityFeePerGas! * 1125n);

      await node.test.setAutomine(true);
      await confirmAndRetry(m.tenantId);
      await expectFundedOnce(m, loan, USDC(100), replacedHash);
      await expect(node.public.getTransactionReceipt({ hash: loan.fundingTxHash as Hash })).rejects.toThrow();
      expect(await node.public.getTransactionCount({ address: m.disbursement.address })).toBe(1);
    } finally {
      await node.test.setAutomine(true);
      // Sessions are issued on the clock and checked against the time: later tests sign in again.
      t.clock.set(new Date());
      useAdapter();
    }
  });

  /** A certified tenant with two verified DISBURSEMENT wallets holding 1,000.00 each: W1 older, with no signer yet; W2 with one, so W2 sends. */
  async function twoWallets(name: string) {
    const m = await certifiedLiveTenant(t, name);
    const wallet = async () => {
      const key = generatePrivateKey();
      keys.push(key);
      const account = privateKeyToAccount(key);
      await node.test.setBalance({ address: account.address, value: 10n * 10n ** 18n });
      await mintUsdc(node, deployment, account.address, USDC(1_000));
      const id = await verifiedEvmWallet(t, m.token, { chain: "POLYGON", role: "DISBURSEMENT", account });
      return { key, account, id };
    };
    const w1 = await wallet();
    const w2 = await wallet();
    // The tests' clock stands still: W1 is made older by hand, so "the oldest ready wallet" is W1 once it has a signer.
    await t.db
      .update(walletsTable)
      .set({ createdAt: new Date(t.clock.now().getTime() - 60_000) })
      .where(eq(walletsTable.id, w1.id));
    await installSigner(t, m.tenantId, { chain: "POLYGON", address: w2.account.address, privateKey: w2.key });
    const loan = async (ref: string) =>
      (await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower(ref), principalAmount: "100.00" })).body as {
        id: string;
        fundingState: string;
        fundingTxHash: string;
        borrowerWalletAddress: Address;
      };
    return { m, w1, w2, loan };
  }
  const txCount = (address: Address) => node.public.getTransactionCount({ address, blockTag: "pending" });

  test("a loan in flight keeps its sender: a signer installed for an older wallet, or the sender deleted, sends nothing again (an audit saw 200.00 sent for a 100.00 loan)", async () => {
    const { m, w1, w2 } = await twoWallets("Two Wallets Ltd");
    await node.test.setAutomine(false);
    try {
      const res = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await m.verifiedBorrower("in-flight"), principalAmount: "100.00" });
      const loan = res.body as { id: string; fundingState: string; fundingTxHash: string; borrowerWalletAddress: Address };
      expect(loan.fundingState).toBe("RESERVED");
      expect((await node.public.getTransaction({ hash: loan.fundingTxHash as Hash })).from.toLowerCase()).toBe(w2.account.address.toLowerCase());

      // The operator installs W1's signer (W1 is now the first ready wallet); the retry must still ask W2's record.
      await installSigner(t, m.tenantId, { chain: "POLYGON", address: w1.account.address, privateKey: w1.key });
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      // The merchant deletes the sending wallet while its transfer is in flight: still nothing sent again, the reservation kept.
      expect((await t.request("DELETE", `/v1/wallets/${w2.id}`, { headers: { authorization: `Bearer ${m.token}` } })).status).toBe(204);
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "CREATED", fundingState: "RESERVED", fundingTxHash: loan.fundingTxHash });
      expect(await node.public.getTransactionCount({ address: w1.account.address, blockTag: "pending" })).toBe(0);
      expect(await node.public.getTransactionCount({ address: w2.account.address, blockTag: "pending" })).toBe(1);

      await node.test.setAutomine(true);
      await node.test.mine({ blocks: 1 });
      await confirmAndRetry(m.tenantId);
      await expectFundedOnce(m, loan, USDC(100), loan.fundingTxHash);
      expect([await usdcOf(w1.account.address), await usdcOf(w2.account.address)]).toEqual([USDC(1_000), USDC(900)]);
      expect(await node.public.getTransactionCount({ address: w1.account.address })).toBe(0);
    } finally {
      await node.test.setAutomine(true);
    }
  });

  test("a pinned sender deleted before anything was sent signs nothing: the reservation is released and the next run sends once from another wallet", async () => {
    const { m, w1, w2, loan } = await twoWallets("Pinned Deleted Ltd");
    // The first run reserves with W2 and stops before its transfer (the chain call fails once).
    const chain = t.deps.chain;
    let failOnce = true;
    t.deps.chain = {
      ...chain,
      transfer: async (request) => {
        if (failOnce) {
          failOnce = false;
          throw new Error("the worker stopped before the transfer");
        }
        return chain.transfer(request);
      },
    };
    t.deps.writer = inProcessLoanWriter({ db: t.db, chain: t.deps.chain, clock: t.clock });
    try {
      // The request itself fails with the stopped worker; the loan is written, RESERVED with its sender.
      await loan("pinned-deleted");
      const [row] = await t.db.select().from(loansTable).where(eq(loansTable.tenantId, m.tenantId));
      const created = { id: row!.id, borrowerWalletAddress: row!.borrowerWalletAddress as Address };
      expect([row!.fundingState, row!.fundingFrom]).toEqual(["RESERVED", w2.account.address]);
      // The merchant deletes W2 and installs W1's signer: W2 may no longer send, and has nothing in flight.
      expect((await t.request("DELETE", `/v1/wallets/${w2.id}`, { headers: { authorization: `Bearer ${m.token}` } })).status).toBe(204);
      await installSigner(t, m.tenantId, { chain: "POLYGON", address: w1.account.address, privateKey: w1.key });
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      expect(await txCount(w2.account.address)).toBe(0);
      const released = (await t.db.select().from(loansTable).where(eq(loansTable.id, created.id)))[0]!;
      expect([released.fundingState, released.fundingFrom]).toEqual(["AWAITING_LIQUIDITY", null]);
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      const sent = await loanOf(m.liveKey, created.id);
      expect((await broadcastTransaction(node, sent.fundingTxHash)).from.toLowerCase()).toBe(w1.account.address.toLowerCase());
      await confirmAndRetry(m.tenantId);
      await expectFundedOnce(m, created, USDC(100), sent.fundingTxHash);
      expect([await txCount(w1.account.address), await txCount(w2.account.address)]).toEqual([1, 0]);
    } finally {
      useAdapter();
    }
  });

  /** Sets an address's USDC balance in the token's storage (`balanceOf` is TestUSDC's slot 3), sending no transaction from it. */
  async function setUsdc(address: Address, amount: bigint) {
    const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [address, 3n]));
    await node.test.setStorageAt({ address: deployment.usdc, index: slot, value: numberToHex(amount, { size: 32 }) });
    expect(await usdcOf(address)).toBe(amount);
  }

  /** A one-shot stop a run waits at until `open()`: `reached` resolves when it arrives. */
  function stopOnce() {
    let arrive!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    const opened = new Promise<void>((resolve) => (open = resolve));
    let used = false;
    const wait = (): Promise<void> => {
      if (used) return Promise.resolve();
      used = true;
      arrive();
      return opened;
    };
    return { reached, open, wait };
  }

  /**
   * Two runs of one loan at once (a loan object reset mid-run, or a LOAN_SHARDS change: two objects each think they own it).
   * Run A reserves with W2 and stops inside its transfer, before its signed transaction is on W2's record (`at`: before it
   * claims a nonce, or after claiming one and before recording what it signed). W1 gets a signer, and the other object's run B
   * releases the reservation (`release`: W2 was deleted and B finds nothing in flight, or B's own attempt from W2 failed: W2
   * held no USDC for a moment); the other object's next run C reserves with W1 and sends. A then goes on.
   */
  async function twoRunsAtOnce(at: "before the nonce" | "after the nonce", release: "deleted" | "failed") {
    const stop = stopOnce();
    let w2Address = "";
    const held = (address: string, step: typeof at) => (at === step && address.toLowerCase() === w2Address.toLowerCase() ? stop.wait() : Promise.resolve());
    const books = memoryEvmSenders();
    const senders: EvmSenders = {
      sender(chain, address) {
        const ledger = books.sender(chain, address);
        return {
          get: (...a) => ledger.get(...a),
          claim: (...a) => ledger.claim(...a),
          addSigned: async (...a) => {
            await held(address, "after the nonce");
            return ledger.addSigned(...a);
          },
          release: (...a) => ledger.release(...a),
          fail: (...a) => ledger.fail(...a),
          sawNonceUsed: (...a) => ledger.sawNonceUsed(...a),
          close: (...a) => ledger.close(...a),
          claimGap: (...a) => ledger.claimGap(...a),
        };
      },
    };
    const transport = custom({
      async request({ method, params }) {
        if (method === "eth_estimateGas") await held((params as [{ from: string }])[0].from, "before the nonce");
        return node.public.request({ method, params } as never);
      },
    });
    useAdapter({ transport, senders });
    try {
      const { m, w1, w2, loan } = await twoWallets(`Two Runs ${at} ${release} Ltd`);
      w2Address = w2.account.address;
      const runA = loan(`two-runs-${at}-${release}`);
      await stop.reached;
      const [row] = await t.db.select().from(loansTable).where(eq(loansTable.tenantId, m.tenantId));
      const created = { id: row!.id, borrowerWalletAddress: row!.borrowerWalletAddress as Address };
      expect([row!.fundingState, row!.fundingFrom, row!.fundingReservation]).toEqual(["RESERVED", w2.account.address, 1]);

      if (release === "deleted") {
        expect((await t.request("DELETE", `/v1/wallets/${w2.id}`, { headers: { authorization: `Bearer ${m.token}` } })).status).toBe(204);
      } else {
        await setUsdc(w2.account.address, 0n);
      }
      await installSigner(t, m.tenantId, { chain: "POLYGON", address: w1.account.address, privateKey: w1.key });
      // The other object: its own lock, so nothing queues it behind run A.
      const other = inProcessLoanWriter({ db: t.db, chain: t.deps.chain, clock: t.clock });
      const process = { kind: "process" as const, tenantId: m.tenantId, loanId: created.id };
      expect(await other.run(process)).toMatchObject({
        fundingState: release === "deleted" ? "AWAITING_LIQUIDITY" : "NONE",
        fundingFrom: null,
        fundingReservation: 1,
      });
      if (release === "failed") await setUsdc(w2.account.address, USDC(1_000));
      const sent = await other.run(process);
      expect([sent.fundingState, sent.fundingFrom, sent.fundingReservation]).toEqual(["RESERVED", w1.account.address, 2]);

      stop.open();
      expect((await runA).id).toBe(created.id);
      await node.test.mine({ blocks: 1 });
      await confirmAndRetry(m.tenantId);
      await expectFundedOnce(m, created, USDC(100), sent.fundingTxHash!);
      expect([await txCount(w1.account.address), await txCount(w2.account.address)]).toEqual([1, 0]);
      expect([await usdcOf(w1.account.address), await usdcOf(w2.account.address)]).toEqual([USDC(900), USDC(1_000)]);
    } finally {
      stop.open(); // never leave run A waiting (an assertion before its release failed)
      useAdapter();
    }
  }

  for (const release of ["deleted", "failed"] as const) {
    const why = release === "deleted" ? "its sender deleted and nothing in flight" : "its own attempt failed";
    test(`two runs of one loan at once, the first stopped before taking a nonce; the other releases (${why}) and sends from another wallet: the first signs nothing`, async () => {
      await twoRunsAtOnce("before the nonce", release);
    });

    test(`two runs of one loan at once, the first stopped holding a nonce it has not recorded a signature for; the other releases (${why}): the nonce is voided, the first broadcasts nothing`, async () => {
      await twoRunsAtOnce("after the nonce", release);
    });
  }

  test("a reservation made before its sender was recorded (funding_from NULL) sends and releases nothing; migration 0036 names the sender where one wallet could have sent it", async () => {
    const { m, w1, w2, loan } = await twoWallets("Legacy Reservation Ltd");
    await node.test.setAutomine(false);
    let created: Awaited<ReturnType<typeof loan>>;
    try {
      created = await loan("legacy");
      expect(created.fundingState).toBe("RESERVED");
      await t.db.update(loansTable).set({ fundingFrom: null }).where(eq(loansTable.id, created.id));
      // W1 gets a signer: the old code sent again from it (an audit saw 200.00 for 100.00). Now nothing moves.
      await installSigner(t, m.tenantId, { chain: "POLYGON", address: w1.account.address, privateKey: w1.key });
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
      expect([await txCount(w1.account.address), await txCount(w2.account.address)]).toEqual([0, 1]);
      expect(await loanOf(m.liveKey, created.id)).toMatchObject({ fundingState: "RESERVED", fundingTxHash: created.fundingTxHash });
    } finally {
      await node.test.setAutomine(true);
    }
    // Two wallets could have sent it: the backfill leaves it to the operator.
    const backfill = readFileSync(join(MIGRATIONS_DIR, "0036_backfill_funding_sender.sql"), "utf8");
    await t.db.run(sql.raw(backfill));
    expect((await t.db.select().from(loansTable).where(eq(loansTable.id, created.id)))[0]!.fundingFrom).toBeNull();
    // With W1 deleted, W2 is the one wallet that could have: the backfill names it, and the loan follows its transfer.
    expect((await t.request("DELETE", `/v1/wallets/${w1.id}`, { headers: { authorization: `Bearer ${m.token}` } })).status).toBe(204);
    await t.db.run(sql.raw(backfill));
    expect((await t.db.select().from(loansTable).where(eq(loansTable.id, created.id)))[0]!.fundingFrom).toBe(w2.account.address);
    await node.test.mine({ blocks: 1 });
    await confirmAndRetry(m.tenantId);
    await expectFundedOnce(m, created, USDC(100), created.fundingTxHash);
    expect([await txCount(w1.account.address), await txCount(w2.account.address)]).toEqual([0, 1]);
  });

  test("a transfer mined but not yet deep enough: a loan it leaves no room for waits, and once it confirms the pool is exact and the waiting loan is funded (an audit saw the first stuck RESERVED for good)", async () => {
    const m = await readyTenant(USDC(1_000));
    const first = await m.liveLoan("600.00");
    expect(first.fundingState).toBe("RESERVED");
    await broadcastTransaction(node, first.fundingTxHash!); // mined: the wallet holds 400.00, the pool still reserves 600.00
    expect(await usdcOf(m.disbursement.address)).toBe(USDC(400));
    // Headroom is understated until the first confirms (the safe side): the second waits rather than over-reserve.
    const second = await m.liveLoan("390.00");
    expect(second.fundingState).toBe("AWAITING_LIQUIDITY");
    await confirmAndRetry(m.tenantId); // the first confirms (its commit never takes available below zero)
    await expectFundedOnce(m, first, USDC(600), first.fundingTxHash!);
    // The next tick reserves and sends the second (the tests' clock stands still, so the first tick may have taken the loans in either order).
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    const sent = await loanOf(m.liveKey, second.id);
    expect(sent.fundingState).toBe("RESERVED");
    await broadcastTransaction(node, sent.fundingTxHash);
    await confirmAndRetry(m.tenantId);
    await expectFundedOnce(m, second, USDC(390), sent.fundingTxHash);
    const [pool] = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.chain, "POLYGON")));
    expect(pool!.reserved).toBe(0n);
    expect(pool!.available).toBeGreaterThanOrEqual(0n);
    expect(await usdcOf(m.disbursement.address)).toBe(USDC(10));
  });

  test("transfers broadcast and not yet mined are never counted twice: four 600.00 loans from a 1,000.00 wallet reserve one, the others wait (an audit reserved all four)", async () => {
    const m = await readyTenant(USDC(1_000));
    await node.test.setAutomine(false);
    try {
      const loans = [];
      for (let i = 0; i < 4; i++) loans.push(await m.liveLoan("600.00"));
      expect(loans.map((l) => l.fundingState)).toEqual(["RESERVED", "AWAITING_LIQUIDITY", "AWAITING_LIQUIDITY", "AWAITING_LIQUIDITY"]);
      expect(await node.public.getTransactionCount({ address: m.disbursement.address, blockTag: "pending" })).toBe(1);
    } finally {
      await node.test.setAutomine(true);
    }
    await node.test.mine({ blocks: 1 });
    await confirmAndRetry(m.tenantId);
    expect(await usdcOf(m.disbursement.address)).toBe(USDC(400));
  });

  test("no signer key appears in any response, log line, console line or database row", async () => {
    expect(keys.length).toBeGreaterThan(0);
    const tables = (await t.db.all<{ name: string }>(sql`SELECT name FROM sqlite_master WHERE type = 'table'`)).map((r) => r.name);
    const rows: string[] = [];
    for (const table of tables)
      rows.push(JSON.stringify(await t.db.all(sql.raw(`SELECT * FROM "${table}"`)), (_, v) => (typeof v === "bigint" ? String(v) : v)));
    const everything = [...responses, ...t.logs, ...consoleLines, ...rows].join("\n").toLowerCase();
    expect(responses.length).toBeGreaterThan(50);
    for (const key of keys) expect(everything).not.toContain(key.slice(2).toLowerCase());
  });
});
