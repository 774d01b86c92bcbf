import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { loans } from "../../db/schema/loans.ts";
import { liveLiquidityFromWallets } from "../../shared/go-live/live-liquidity.ts";
import { inProcessLoanWriter } from "../../shared/loans/loan-commands.ts";
import { retryFunding, sweepDueLoans } from "../../shared/sweeps/run-sweeps.ts";
import { chainPortDouble, type ChainPortDouble } from "../../shared/testing/chain-port-double.ts";
import { bearer } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { certifiedLiveTenant, installSigner } from "../../shared/testing/live-tenants.ts";
import { apiKey, createLoan } from "../../shared/testing/loan-fixtures.ts";

/**
 * Live funding (issue 12 item 5, DECISIONS.md "Live wallets"), against the
 * chain-port double: a live loan is sent from the tenant's verified
 * DISBURSEMENT wallet with an installed signer, reserving against that
 * wallet's on-chain balance, and never broadcast when the wallet cannot pay
 * gas. Certification is written to the database here (the go-live flow is
 * tested on its own).
 */

let t: TestApp;
let chain: ChainPortDouble;
beforeAll(async () => {
  t = await createTestApp();
  chain = chainPortDouble(t.deps.chain);
  t.deps.chain = chain;
  // Loans are processed by the writer: it must send through the double too.
  t.deps.writer = inProcessLoanWriter({ db: t.db, chain, clock: t.clock });
});
afterAll(() => t.close());

const USDC = (amount: number) => BigInt(amount) * 1_000_000n;
const GAS_OK = 10n ** 18n; // 1 POL, above POLYGON's minGasNative (0.1 POL)

/** A certified tenant with a live key and a KYC policy; `borrower()` gives a fresh VERIFIED borrower ref. */
async function liveTenant() {
  const m = await certifiedLiveTenant(t, "Live Funding Ltd");
  const borrower = () => m.verifiedBorrower("live-funding-borrower");
  const liveLoan = async (principalAmount: string) => createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: await borrower(), principalAmount });
  return { ...m, liveLoan, borrower };
}

async function addWallet(token: string, account: PrivateKeyAccount) {
  const wallet = await t.request("POST", "/v1/wallets", { headers: bearer(token), body: { chain: "POLYGON", role: "DISBURSEMENT", address: account.address } });
  expect(wallet.status).toBe(201);
  return wallet.body.id as string;
}

async function verifyWallet(token: string, walletId: string, account: PrivateKeyAccount) {
  const challenge = await t.request("POST", `/v1/wallets/${walletId}/challenge`, { headers: bearer(token) });
  const signature = await account.signMessage({ message: challenge.body.message });
  expect(
    (await t.request("POST", `/v1/wallets/${walletId}/verify`, { headers: bearer(token), body: { challengeId: challenge.body.id, signature } })).status,
  ).toBe(200);
}

/** A live tenant whose POLYGON DISBURSEMENT wallet is verified, has a signer, and holds `stablecoin` and `native`. */
async function readyTenant(stablecoin: bigint, native = GAS_OK) {
  const m = await liveTenant();
  const key = generatePrivateKey();
  const disbursement = privateKeyToAccount(key);
  await verifyWallet(m.token, await addWallet(m.token, disbursement), disbursement);
  await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });
  chain.setBalances("POLYGON", disbursement.address, { stablecoin, native });
  return { ...m, disbursement };
}

const balanceOf = (address: string) => chain.balances!("POLYGON", address);
const transfersFrom = (address: string) => chain.transfers.filter((x) => x.from.toLowerCase() === address.toLowerCase());

async function eventsOf(liveKey: string, loanId: string) {
  const page = await t.request("GET", `/v1/events?loanId=${loanId}`, { headers: apiKey(liveKey) });
  expect(page.status).toBe(200);
  return page.body.data as { type: string; mode: string; data: { reason?: string } }[];
}

const reasonOf = async (liveKey: string, loanId: string) => (await eventsOf(liveKey, loanId)).find((e) => e.type === "loan.funding_failed")?.data.reason;

describe("live funding from the DISBURSEMENT wallet", () => {
  test("a live POLYGON loan is sent from the DISBURSEMENT wallet: ACTIVE, one transfer, a live FUNDING settlement, loan.funded, no sandbox pool moved", async () => {
    const m = await readyTenant(USDC(1_000));
    const sandboxPoolsBefore = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "sandbox")));

    const created = await m.liveLoan("250.00");
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "ACTIVE", mode: "live", fundingState: "FUNDED", fundingTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });

    const sent = transfersFrom(m.disbursement.address);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      chain: "POLYGON",
      asset: "USDC",
      from: m.disbursement.address,
      to: created.body.borrowerWalletAddress,
      amount: USDC(250),
      reference: `funding:${created.body.id}`,
      // The loan's first reservation: a failure answered for it is final (chain-port.ts `reservation`).
      reservation: 1,
    });
    expect(sent[0]!.sandboxTenantId).toBeUndefined();
    expect(await balanceOf(m.disbursement.address)).toEqual({ stablecoin: USDC(750), native: GAS_OK });

    const [settlement] = await t.db.select().from(settlements).where(eq(settlements.loanId, created.body.id));
    expect(settlement).toMatchObject({
      kind: "FUNDING",
      status: "CONFIRMED",
      mode: "live",
      chain: "POLYGON",
      amount: USDC(250),
      fromAddress: m.disbursement.address,
      toAddress: created.body.borrowerWalletAddress,
      txHash: created.body.fundingTxHash,
    });
    const types = (await eventsOf(m.liveKey, created.body.id)).map((e) => e.type);
    expect(types).toContain("loan.funded");
    expect(types).not.toContain("loan.funding_failed");

    // The sandbox pools are untouched; the live pool mirrors the wallet and holds no reservation after funding.
    expect(
      await t.db
        .select()
        .from(liquidityPools)
        .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "sandbox"))),
    ).toEqual(sandboxPoolsBefore);
    const live = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "live")));
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ chain: "POLYGON", stablecoin: "USDC", available: USDC(750), reserved: 0n });
  });

  test("two concurrent live loans whose sum exceeds the wallet's balance: one ACTIVE, one waiting, one transfer", async () => {
    const m = await readyTenant(USDC(500));
    const [a, b] = await Promise.all([m.liveLoan("300.00"), m.liveLoan("300.00")]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const states = [a.body, b.body].map((l) => `${l.status}/${l.fundingState}`).sort();
    expect(states).toEqual(["ACTIVE/FUNDED", "CREATED/AWAITING_LIQUIDITY"]);
    expect(transfersFrom(m.disbursement.address)).toHaveLength(1);
    expect(await balanceOf(m.disbursement.address)).toEqual({ stablecoin: USDC(200), native: GAS_OK });
    const waiting = a.body.status === "ACTIVE" ? b.body : a.body;
    expect(await reasonOf(m.liveKey, waiting.id)).toBe("no liquidity pool has enough headroom for this principal");
    const [pool] = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "live")));
    expect(pool!.reserved).toBe(0n);

    // The wallet is topped up: the retry job funds the waiting loan from it.
    chain.setBalances("POLYGON", m.disbursement.address, { stablecoin: USDC(600) });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect((await t.request("GET", `/v1/loans/${waiting.id}`, { headers: apiKey(m.liveKey) })).body).toMatchObject({
      status: "ACTIVE",
      fundingState: "FUNDED",
    });
    expect(transfersFrom(m.disbursement.address)).toHaveLength(2);
  });

  test("gas below the chain's minimum: the loan waits, nothing is broadcast, the merchant is told; after a top-up the retry job funds it", async () => {
    const m = await readyTenant(USDC(1_000), 10n ** 17n - 1n); // one wei under POLYGON's 0.1 POL
    const created = await m.liveLoan("100.00");
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY", fundingTxHash: null });
    expect(transfersFrom(m.disbursement.address)).toHaveLength(0);
    const types = (await eventsOf(m.liveKey, created.body.id)).map((e) => e.type);
    expect(types).toContain("loan.funding_failed");
    expect(types).toContain("liquidity.unavailable");
    expect(await reasonOf(m.liveKey, created.body.id)).toBe(
      `the DISBURSEMENT wallet ${m.disbursement.address} on POLYGON cannot pay gas: it holds 99999999999999999 native base units, funding needs at least 100000000000000000`,
    );
    const notes = (await t.request("GET", "/v1/notifications", { headers: apiKey(m.liveKey) })).body.data as { type: string }[];
    expect(notes.map((n) => n.type)).toContain("loan.funding_failed");
    // Still short of gas: the retry job broadcasts nothing and reports nothing again.
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(transfersFrom(m.disbursement.address)).toHaveLength(0);
    expect((await eventsOf(m.liveKey, created.body.id)).filter((e) => e.type === "loan.funding_failed")).toHaveLength(1);

    chain.setBalances("POLYGON", m.disbursement.address, { native: 10n ** 17n });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    const funded = (await t.request("GET", `/v1/loans/${created.body.id}`, { headers: apiKey(m.liveKey) })).body;
    expect(funded).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED", fundingTxHash: expect.any(String) });
    expect(transfersFrom(m.disbursement.address)).toHaveLength(1);
  });

  test("no DISBURSEMENT wallet, an unverified one, one without a signer: the loan waits with a reason naming what is missing; once ready, the retry job funds them", async () => {
    const m = await liveTenant();
    const key = generatePrivateKey();
    const disbursement = privateKeyToAccount(key);
    chain.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(1_000), native: GAS_OK });

    const none = await m.liveLoan("100.00");
    expect(none.body).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    expect(await reasonOf(m.liveKey, none.body.id)).toBe("no DISBURSEMENT wallet on POLYGON: add one with POST /v1/wallets and verify it");

    const walletId = await addWallet(m.token, disbursement);
    const unverified = await m.liveLoan("100.00");
    expect(unverified.body.fundingState).toBe("AWAITING_LIQUIDITY");
    expect(await reasonOf(m.liveKey, unverified.body.id)).toStartWith("the DISBURSEMENT wallet on POLYGON is not verified");

    await verifyWallet(m.token, walletId, disbursement);
    const unsigned = await m.liveLoan("100.00");
    expect(unsigned.body.fundingState).toBe("AWAITING_LIQUIDITY");
    expect(await reasonOf(m.liveKey, unsigned.body.id)).toBe(
      "no signer is installed for the verified DISBURSEMENT wallet on POLYGON: the platform operator installs it",
    );
    expect(transfersFrom(disbursement.address)).toHaveLength(0);

    await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    for (const loan of [none, unverified, unsigned]) {
      expect((await t.request("GET", `/v1/loans/${loan.body.id}`, { headers: apiKey(m.liveKey) })).body.status).toBe("ACTIVE");
    }
    expect(transfersFrom(disbursement.address)).toHaveLength(3);
    expect(await balanceOf(disbursement.address)).toEqual({ stablecoin: USDC(700), native: GAS_OK });
  });

  test("an approved live loan waiting for its wallet is held, not funded, when funding starts after the borrower's KYC failed, its wallet was blocked or the policy dropped its KYC requirement: HELD with loan.funding_failed naming why, nothing reserved or sent, the decision as recorded; funded once fixed (it was funded to a FAILED borrower)", async () => {
    const m = await liveTenant();
    const key = generatePrivateKey();
    const disbursement = privateKeyToAccount(key);
    chain.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(1_000), native: GAS_OK });
    const failed = await m.liveLoan("100.00");
    const blocked = await m.liveLoan("100.00");
    const fine = await m.liveLoan("100.00");
    for (const loan of [failed, blocked, fine]) expect(loan.body).toMatchObject({ fundingState: "AWAITING_LIQUIDITY", decision: { outcome: "APPROVED" } });

    // A compliance hit and a fraud report while they wait.
    const kyc = (status: string) => ({ body: { status, merchantUserId: "compliance-1" }, headers: apiKey(m.liveKey) });
    expect((await t.request("PATCH", `/v1/borrowers/${failed.body.borrowerRef}/kyc`, kyc("FAILED"))).status).toBe(200);
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [blocked.body.borrowerWalletAddress] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.liveKey) })).status).toBe(200);

    const walletId = await addWallet(m.token, disbursement);
    await verifyWallet(m.token, walletId, disbursement);
    await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });

    const loanOf = async (id: string) => (await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(m.liveKey) })).body;
    expect(await loanOf(fine.body.id)).toMatchObject({ status: "ACTIVE" });
    expect(await loanOf(failed.body.id)).toMatchObject({ status: "CREATED", fundingState: "HELD", fundedAt: null, decision: failed.body.decision });
    expect(await loanOf(blocked.body.id)).toMatchObject({ status: "CREATED", fundingState: "HELD", decision: blocked.body.decision });
    const events = await eventsOf(m.liveKey, failed.body.id);
    expect(events.map((e) => e.type).reverse()).toEqual([
      "loan.application_submitted",
      "loan.decision",
      "loan.funding_failed",
      "liquidity.unavailable",
      "loan.funding_failed",
    ]);
    expect(events[0]!.data).toMatchObject({
      reason: "funding is held: Borrower KYC status is FAILED; the policy requires VERIFIED",
      reasons: [{ code: "KYC_NOT_VERIFIED", message: "Borrower KYC status is FAILED; the policy requires VERIFIED" }],
    });
    expect((await eventsOf(m.liveKey, blocked.body.id))[0]!.data).toMatchObject({ reasons: [{ code: "WALLET_BLOCKED" }] });
    // One transfer, the fine loan's; the live pool holds nothing for the held ones.
    expect(transfersFrom(disbursement.address)).toHaveLength(1);
    expect(await balanceOf(disbursement.address)).toEqual({ stablecoin: USDC(900), native: GAS_OK });
    const [pool] = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "live")));
    expect(pool!.reserved).toBe(0n);
    // Retried while held: nothing new is reported, nothing sent.
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await eventsOf(m.liveKey, failed.body.id)).toHaveLength(5);
    expect(transfersFrom(disbursement.address)).toHaveLength(1);

    // Fixed: the borrower verified again and the wallet unblocked, the next retry funds both.
    expect((await t.request("PATCH", `/v1/borrowers/${failed.body.borrowerRef}/kyc`, kyc("VERIFIED"))).status).toBe(200);
    expect((await t.request("PUT", "/v1/policies", { body: { ...policy, blockedWallets: [] }, headers: apiKey(m.liveKey) })).status).toBe(200);
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    for (const loan of [failed, blocked]) expect(await loanOf(loan.body.id)).toMatchObject({ status: "ACTIVE" });
    expect(transfersFrom(disbursement.address)).toHaveLength(3);

    // The policy drops its KYC requirement (and the settings have none): a live loan approved before it is held when it funds.
    chain.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(700), native: 0n });
    const waiting = await m.liveLoan("100.00");
    expect(waiting.body).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY", decision: { outcome: "APPROVED" } });
    chain.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(700), native: GAS_OK });
    expect(
      (await t.request("PUT", "/v1/policies", { body: { ...policy, requireKycVerified: false, blockedWallets: [] }, headers: apiKey(m.liveKey) })).status,
    ).toBe(200);
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(waiting.body.id)).toMatchObject({ fundingState: "HELD", decision: { outcome: "APPROVED" } });
    expect((await eventsOf(m.liveKey, waiting.body.id))[0]!.data).toMatchObject({ reasons: [{ code: "LIVE_KYC_POLICY_REQUIRED" }] });
    expect(transfersFrom(disbursement.address)).toHaveLength(3);
  });

  test("a KYC failure that lands while funding reads the wallet's balances (after the hold was judged) is caught by the reservation's condition: held, nothing sent", async () => {
    const m = await liveTenant();
    const key = generatePrivateKey();
    const disbursement = privateKeyToAccount(key);
    await verifyWallet(m.token, await addWallet(m.token, disbursement), disbursement);
    await installSigner(t, m.tenantId, { chain: "POLYGON", address: disbursement.address, privateKey: key });
    chain.setBalances("POLYGON", disbursement.address, { stablecoin: USDC(1_000), native: 0n });
    const loan = await m.liveLoan("100.00");
    expect(loan.body).toMatchObject({ fundingState: "AWAITING_LIQUIDITY", decision: { outcome: "APPROVED" } });
    chain.setBalances("POLYGON", disbursement.address, { native: GAS_OK });
    const read = chain.balances!.bind(chain);
    let patched = false;
    chain.balances = async (c, a) => {
      if (!patched) {
        patched = true;
        const kyc = { status: "FAILED", merchantUserId: "compliance-1" };
        expect((await t.request("PATCH", `/v1/borrowers/${loan.body.borrowerRef}/kyc`, { body: kyc, headers: apiKey(m.liveKey) })).status).toBe(200);
      }
      return read(c, a);
    };
    try {
      await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    } finally {
      chain.balances = read;
    }
    const after = (await t.request("GET", `/v1/loans/${loan.body.id}`, { headers: apiKey(m.liveKey) })).body;
    expect(after).toMatchObject({ status: "CREATED", fundingState: "HELD" });
    expect(transfersFrom(disbursement.address)).toHaveLength(0);
  });

  test("a reviewer's APPROVE of a loan whose borrower's KYC failed since it applied: approved (loan.approved), and its funding held with the reason; nothing sent", async () => {
    const m = await readyTenant(USDC(1_000));
    const policy = { requireKycVerified: true, manualReviewAbove: "50.00", maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.liveKey) })).status).toBe(200);
    const loan = await m.liveLoan("100.00");
    expect(loan.body.decision).toMatchObject({ outcome: "MANUAL_REVIEW" });
    const kyc = { status: "FAILED", merchantUserId: "compliance-1" };
    expect((await t.request("PATCH", `/v1/borrowers/${loan.body.borrowerRef}/kyc`, { body: kyc, headers: apiKey(m.liveKey) })).status).toBe(200);

    const approve = await t.request("POST", `/v1/loans/${loan.body.id}/review`, { body: { action: "APPROVE", note: null }, headers: bearer(m.token) });
    expect(approve.status).toBe(200);
    expect(approve.body).toMatchObject({ status: "CREATED", fundingState: "HELD", decision: { outcome: "APPROVED" } });
    expect((await eventsOf(m.liveKey, loan.body.id)).map((e) => e.type).slice(0, 2)).toEqual(["loan.funding_failed", "loan.approved"]);
    expect(transfersFrom(m.disbursement.address)).toHaveLength(0);
  });

  test("a live loan left RESERVED by a cut-off run, whose wallet can no longer pay gas: the retry releases the reservation and waits; with gas it funds", async () => {
    const m = await readyTenant(USDC(1_000));
    expect((await m.liveLoan("100.00")).body.status).toBe("ACTIVE");
    const [pool] = await t.db
      .select()
      .from(liquidityPools)
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "live")));
    chain.setBalances("POLYGON", m.disbursement.address, { native: 0n });
    const loan = (await m.liveLoan("200.00")).body;
    expect(loan.fundingState).toBe("AWAITING_LIQUIDITY");
    // As if a run had reserved the principal and stopped before its transfer.
    await t.db.update(loans).set({ fundingState: "RESERVED", poolId: pool!.id, fundingFrom: m.disbursement.address }).where(eq(loans.id, loan.id));
    await t.db
      .update(liquidityPools)
      .set({ reserved: USDC(200) })
      .where(eq(liquidityPools.id, pool!.id));

    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    const [waiting] = await t.db.select().from(loans).where(eq(loans.id, loan.id));
    expect(waiting).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY", poolId: null });
    const [released] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.id, pool!.id));
    expect(released!.reserved).toBe(0n);
    expect(transfersFrom(m.disbursement.address)).toHaveLength(1);

    chain.setBalances("POLYGON", m.disbursement.address, { native: GAS_OK });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.liveKey) })).body.status).toBe("ACTIVE");
    expect(await balanceOf(m.disbursement.address)).toEqual({ stablecoin: USDC(700), native: GAS_OK });
    const [after] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.id, pool!.id));
    expect(after).toMatchObject({ available: USDC(700), reserved: 0n });
  });

  test("the chain cannot be asked for balances (RPC down): the loan waits with a reason, no 500, nothing broadcast", async () => {
    const m = await readyTenant(USDC(1_000));
    const balances = chain.balances;
    chain.balances = async () => {
      throw new Error("rpc down");
    };
    try {
      const created = await m.liveLoan("100.00");
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
      expect(await reasonOf(m.liveKey, created.body.id)).toBe(
        `the balances of the DISBURSEMENT wallet ${m.disbursement.address} on POLYGON cannot be read right now`,
      );
      expect(transfersFrom(m.disbursement.address)).toHaveLength(0);
    } finally {
      chain.balances = balances;
    }
  });

  test("step 5's liquidity is the DISBURSEMENT wallet's balance minus what its live pool holds reserved for loans in flight", async () => {
    const m = await readyTenant(USDC(1_000));
    const liquidity = liveLiquidityFromWallets({ db: t.db, chain });
    expect(await liquidity({ tenantId: m.tenantId })).toMatchObject({ balance: USDC(1_000), minPrincipal: USDC(10) });
    expect((await m.liveLoan("100.00")).body.status).toBe("ACTIVE");
    // A loan in flight: its principal is reserved and has not left the wallet yet.
    await t.db
      .update(liquidityPools)
      .set({ reserved: USDC(300) })
      .where(and(eq(liquidityPools.tenantId, m.tenantId), eq(liquidityPools.mode, "live")));
    expect(await liquidity({ tenantId: m.tenantId })).toMatchObject({ balance: USDC(600), minPrincipal: USDC(10) });
  });
});

describe("one sandbox clock per tenant, for its sandbox loans only", () => {
  test("a certified tenant's sandbox key still moves the sandbox clock: its sandbox loan defaults, its live loan stays ACTIVE on real time", async () => {
    const m = await readyTenant(USDC(1_000));
    const sandboxLoan = await createLoan(t, m.key, { tenureDays: 3, borrowerRef: await m.borrower() });
    expect(sandboxLoan.body).toMatchObject({ status: "ACTIVE", mode: "sandbox" });
    const live = await m.liveLoan("100.00");
    expect(live.body).toMatchObject({ status: "ACTIVE", mode: "live" });

    const advanced = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 40 * 86_400 }, headers: apiKey(m.key) });
    expect(advanced.status).toBe(200);
    const sandboxNow = new Date(advanced.body.now).getTime();
    expect(sandboxNow - t.clock.now().getTime()).toBe(40 * 86_400_000);
    expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.key) })).body.now).toBe(advanced.body.now);

    const sandboxAfter = await t.request("GET", `/v1/loans/${sandboxLoan.body.id}`, { headers: apiKey(m.key) });
    expect(sandboxAfter.body).toMatchObject({ status: "DEFAULTED" });
    const sandboxEvents = await t.request("GET", `/v1/events?loanId=${sandboxLoan.body.id}`, { headers: apiKey(m.key) });
    expect(sandboxEvents.body.data.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(["loan.overdue", "loan.defaulted"]));

    // The live loan is judged on the system clock: not overdue, no late fee, no overdue/default event, even after the cron's sweep.
    await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock });
    const liveAfter = await t.request("GET", `/v1/loans/${live.body.id}`, { headers: apiKey(m.liveKey) });
    expect(liveAfter.body).toMatchObject({ status: "ACTIVE", lateFee: "0.00", lateFeeDays: 0, totalDue: live.body.totalDue, amountDue: live.body.amountDue });
    expect((await eventsOf(m.liveKey, live.body.id)).map((e) => e.type)).not.toContain("loan.overdue");
    const [row] = await t.db.select().from(loans).where(eq(loans.id, live.body.id));
    expect(row!.lateFeeDays).toBe(0);

    // The live key cannot move or read the sandbox clock.
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 60 }, headers: apiKey(m.liveKey) })).status).toBe(403);
    expect((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.liveKey) })).status).toBe(403);
  });
});
