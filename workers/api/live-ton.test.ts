import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Address, beginCell, toNano } from "@ton/core";
import { Blockchain, type SandboxContract, type TreasuryContract } from "@ton/sandbox";
import { and, eq } from "drizzle-orm";
import { settlements } from "../../db/schema/loan-records.ts";
import { loans } from "../../db/schema/loans.ts";
import { unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { heldPayments } from "../../db/schema/settlement-tracking.ts";
import { tonWalletBacklogs, tonWalletCursors, tonWalletReads } from "../../db/schema/ton.ts";
import { CHAIN_CONFIG } from "../../shared/chains/chain-config.ts";
import type { ChainPort } from "../../shared/chains/chain-port.ts";
import { sealedSignerSource } from "../../shared/chains/live/signer-source.ts";
import { routedChainPort } from "../../shared/chains/routed-chain-port.ts";
import { JETTON_OP, jettonTransferBody, textComment } from "../../shared/chains/ton/jetton-messages.ts";
import { jettonBalance, jettonWalletOf } from "../../shared/chains/ton/jetton-reads.ts";
import { tonLivePort } from "../../shared/chains/ton/live/ton-live-port.ts";
import { deployJetton, type TestJetton } from "../../shared/chains/ton/testing/jetton-contracts.ts";
import { type SandboxNetwork, sandboxNetwork } from "../../shared/chains/ton/testing/sandbox-network.ts";
import { testV5Wallet, type TestV5Wallet } from "../../shared/chains/ton/testing/test-ton-wallet.ts";
import type { Chain } from "../../shared/domain/rails.ts";
import { CHAINS } from "../../shared/domain/vocabularies.ts";
import { wholeSecondMs } from "../../shared/domain/pricing.ts";
import { inProcessLoanWriter } from "../../shared/loans/loan-commands.ts";
import { heldBackoffMs } from "../../shared/settlement/held-payments.ts";
import { pollTonCollections, pollTonWallet, TON_READ_LAG_MS } from "../../shared/settlement/ton-listener.ts";
import { retryFunding } from "../../shared/sweeps/run-sweeps.ts";
import { bearer } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { certifiedLiveTenant, installSigner } from "../../shared/testing/live-tenants.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "./openapi-examples.ts";
import { apiKey, createLoan } from "../../shared/testing/loan-fixtures.ts";

/**
 * Live TON end to end (issue 13, TON acceptance) against @ton/sandbox, the
 * emulator running the real wallet v5r1 and the TEP-74 reference jetton: a
 * certified tenant's live TON loan is funded by a USDT jetton transfer from
 * its DISBURSEMENT wallet through the api app; the borrower repays with a
 * jetton transfer carrying the exact comment to the tenant's COLLECTIONS
 * wallet, and the TON listener makes the loan REPAID. A wrong comment,
 * another jetton, a plain TON transfer, a bounced transfer: not credited.
 */

const WIDGET_HOST = "embed.svc-credit.test";
const USDT = (n: number) => BigInt(n) * 1_000_000n;

let t: TestApp;
let blockchain: Blockchain;
let network: SandboxNetwork;
let admin: SandboxContract<TreasuryContract>;
let usdt: TestJetton;
let fake: TestJetton;

beforeAll(async () => {
  t = await createTestApp();
  blockchain = await Blockchain.create();
  network = sandboxNetwork(blockchain);
  admin = await blockchain.treasury("admin");
  usdt = await deployJetton(blockchain, admin, "Tether USD");
  fake = await deployJetton(blockchain, admin, "Tether USD (look-alike)");
  const ton = tonLivePort({
    settings: { chain: "TON", rpcUrl: "sandbox", apiKey: null, tokenAddress: usdt.master.toRawString(), poolAddress: null, confirmations: 1, startBlock: 0 },
    signers: sealedSignerSource(t.db, t.deps.secretsKey),
    env: {},
    db: t.db,
    network,
  });
  const ports: Partial<Record<Chain, ChainPort>> = { TON: ton };
  for (const chain of CHAINS) if (CHAIN_CONFIG[chain].simulated) ports[chain] = t.deps.chain;
  t.deps.chain = routedChainPort(ports);
  t.deps.writer = inProcessLoanWriter({ db: t.db, chain: t.deps.chain, clock: t.clock });
});
afterAll(() => t.close());

const listen = () => pollTonCollections({ db: t.db, writer: t.deps.writer, clock: t.clock, network, master: usdt.master.toRawString() });
const balanceOf = async (jetton: TestJetton, owner: Address) => jettonBalance(network, await jettonWalletOf(network, jetton.master, owner));

async function addVerifiedWallet(token: string, role: "DISBURSEMENT" | "COLLECTIONS", wallet: TestV5Wallet) {
  const created = await t.request("POST", "/v1/wallets", {
    headers: bearer(token),
    body: { chain: "TON", role, address: wallet.address.toString({ bounceable: false }) },
  });
  expect(created.status).toBe(201);
  const challenge = await t.request("POST", `/v1/wallets/${created.body.id}/challenge`, { headers: bearer(token) });
  const reply = await wallet.signData({ text: challenge.body.message, domain: WIDGET_HOST, timestamp: Math.floor(t.clock.now().getTime() / 1000) });
  const verified = await t.request("POST", `/v1/wallets/${created.body.id}/verify`, {
    headers: bearer(token),
    body: { challengeId: challenge.body.id, ...reply },
  });
  expect(verified.status).toBe(200);
  return created.body.id as string;
}

/** A certified tenant with a live key, a funded TON DISBURSEMENT wallet (signer installed) and a verified TON COLLECTIONS wallet. */
async function liveTonTenant(name: string) {
  const m = await certifiedLiveTenant(t, name);
  const { liveKey } = m;
  const rail = { ...MERCHANT_CONFIG_EXAMPLE, network: "TON", stablecoin: "USDT" };
  const product = await t.request("POST", "/v1/merchant-configs", { body: rail, headers: bearer(m.token) });
  expect(product.status).toBe(201);
  const loanProductId = product.body.loanProductId as string;

  const disbursement = testV5Wallet(blockchain);
  await admin.send({ to: disbursement.address, value: toNano("2"), bounce: false });
  await usdt.mint(disbursement.address, USDT(10_000));
  await addVerifiedWallet(m.token, "DISBURSEMENT", disbursement);
  await installSigner(t, m.tenantId, { chain: "TON", address: disbursement.raw, privateKey: disbursement.seedHex });

  const collections = testV5Wallet(blockchain);
  const collectionsId = await addVerifiedWallet(m.token, "COLLECTIONS", collections);

  /** A live TON loan to a fresh borrower wallet (a treasury that sends jettons as its owner would). */
  const liveLoan = async (principalAmount: string) => {
    const ref = await m.verifiedBorrower("live-ton-borrower");
    const borrower = await blockchain.treasury(ref);
    const created = await createLoan(t, liveKey, {
      loanProductId,
      chain: "TON",
      borrowerRef: ref,
      borrowerWalletAddress: borrower.address.toRawString(),
      principalAmount,
    });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    return { loan: created.body, borrower };
  };
  return { ...m, liveKey, disbursement, collections, collectionsId, liveLoan };
}

/** The borrower sends `amount` of `jetton` to `to` with `comment`, as a wallet app does (1 nanoton forwarded so the recipient is notified). */
async function payJettons(borrower: SandboxContract<TreasuryContract>, jetton: TestJetton, to: Address, amount: bigint, comment: string | null) {
  const body = jettonTransferBody({ queryId: 7n, amount, destination: to, responseDestination: borrower.address, forwardTonAmount: 1n, comment });
  await borrower.send({ to: await jettonWalletOf(network, jetton.master, borrower.address), value: toNano("0.1"), body });
}

const loanOf = async (liveKey: string, id: string) => (await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(liveKey) })).body;
const unmatchedOf = (tenantId: string) => t.db.select().from(unmatchedPayments).where(eq(unmatchedPayments.tenantId, tenantId));
const repaymentsOf = (loanId: string) =>
  t.db
    .select()
    .from(settlements)
    .where(and(eq(settlements.loanId, loanId), eq(settlements.kind, "REPAYMENT")));

/** The time up to which the listener has read the tenant's TON COLLECTIONS wallet (ms), or null. */
const readThroughOf = async (tenantId: string) => {
  const [row] = await t.db.select({ at: tonWalletReads.readThroughAt }).from(tonWalletReads).where(eq(tonWalletReads.tenantId, tenantId));
  return row ? row.at.getTime() : null;
};

describe("live TON: funding and repayment against the emulator", () => {
  test("a live TON loan is funded by a USDT jetton transfer from the DISBURSEMENT wallet: ACTIVE, the borrower's jetton balance rises by the principal", async () => {
    const m = await liveTonTenant("Ton Live Ltd");
    const { loan, borrower } = await m.liveLoan("250.00");
    expect(loan).toMatchObject({
      status: "ACTIVE",
      mode: "live",
      chain: "TON",
      fundingState: "FUNDED",
      fundingTxHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await balanceOf(usdt, borrower.address)).toBe(USDT(250));
    expect(await balanceOf(usdt, m.disbursement.address)).toBe(USDT(9_750));
    const [funding] = await t.db
      .select()
      .from(settlements)
      .where(and(eq(settlements.loanId, loan.id), eq(settlements.kind, "FUNDING")));
    expect(funding).toMatchObject({ status: "CONFIRMED", mode: "live", chain: "TON", amount: USDT(250), txHash: loan.fundingTxHash });
    // The retry job asks again for nothing: the loan is funded once.
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await balanceOf(usdt, borrower.address)).toBe(USDT(250));
  });

  test("a transfer in flight: the loan keeps its reservation and records the message; the retry job makes it ACTIVE once the jettons arrive", async () => {
    const m = await liveTonTenant("Ton Pending Ltd");
    network.hold();
    const { loan, borrower } = await m.liveLoan("100.00");
    expect(loan).toMatchObject({ status: "CREATED", fundingState: "RESERVED", fundingTxHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await network.deliver();
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    expect(await balanceOf(usdt, borrower.address)).toBe(USDT(100));
  });

  test("a borrower who buries its jetton wallet's receipt under 250 transactions: the retry job's next run reads on from where the last stopped and the loan becomes ACTIVE, funded once (before, it stayed pending for good while the borrower held the principal)", async () => {
    const m = await liveTonTenant("Ton Buried Receipt Ltd");
    const broadcastsBefore = network.broadcasts.length;
    network.hold();
    const { loan, borrower } = await m.liveLoan("100.00");
    expect(loan).toMatchObject({ status: "CREATED", fundingState: "RESERVED" });
    await network.deliver();
    const flooder = testV5Wallet(blockchain);
    await admin.send({ to: flooder.address, value: toNano("20"), bounce: false });
    const receiptWallet = await jettonWalletOf(network, usdt.master, borrower.address);
    await flooder.send(Array.from({ length: 250 }, () => ({ to: receiptWallet, value: 1_000_000n, bounce: false })));
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "CREATED", fundingState: "RESERVED" });
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED", dueAt: expect.any(String) });
    expect([await balanceOf(usdt, borrower.address), await balanceOf(usdt, m.disbursement.address)]).toEqual([USDT(100), USDT(9_900)]);
    expect(network.broadcasts.length - broadcastsBefore).toBe(1);
  }, 120_000);

  test("a transfer in flight from one wallet while the loan was reserved again from another (a leftover run): the funding settlement names the wallet that paid", async () => {
    const m = await liveTonTenant("Ton Two Senders Ltd");
    network.hold();
    const { loan, borrower } = await m.liveLoan("100.00");
    expect(loan).toMatchObject({ status: "CREATED", fundingState: "RESERVED" });
    // A second DISBURSEMENT wallet, and the loan's reservation now naming it, as a run that released and reserved again would leave it.
    const other = testV5Wallet(blockchain);
    await admin.send({ to: other.address, value: toNano("2"), bounce: false });
    await usdt.mint(other.address, USDT(1_000));
    await addVerifiedWallet(m.token, "DISBURSEMENT", other);
    await installSigner(t, m.tenantId, { chain: "TON", address: other.raw, privateKey: other.seedHex });
    await t.db.update(loans).set({ fundingFrom: other.raw }).where(eq(loans.id, loan.id));
    await network.deliver();
    await retryFunding({ db: t.db, writer: t.deps.writer, clock: t.clock }, { tenantId: m.tenantId });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    expect([await balanceOf(usdt, borrower.address), await balanceOf(usdt, m.disbursement.address), await balanceOf(usdt, other.address)]).toEqual([
      USDT(100),
      USDT(9_900),
      USDT(1_000),
    ]);
    const [funding] = await t.db
      .select()
      .from(settlements)
      .where(and(eq(settlements.loanId, loan.id), eq(settlements.kind, "FUNDING")));
    expect(funding).toMatchObject({ status: "CONFIRMED", fromAddress: m.disbursement.raw, amount: USDT(100) });
  });

  test("the borrower repays with the exact comment to the COLLECTIONS wallet: REPAID once, however often the listener runs", async () => {
    const m = await liveTonTenant("Ton Repay Ltd");
    const { loan, borrower } = await m.liveLoan("100.00");
    const instructions = await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.liveKey) });
    expect(instructions.status).toBe(200);
    expect(instructions.body).toMatchObject({ chain: "TON", supported: true, asset: "USDT", comment: `svc:repay:${loan.id}` });
    // The tenant's COLLECTIONS wallet, never an address the platform controls.
    expect(Address.parse(instructions.body.to).equals(m.collections.address)).toBe(true);
    const due = BigInt(instructions.body.amountUnits);
    await usdt.mint(borrower.address, due - USDT(100)); // the fee on top of the principal

    await payJettons(borrower, usdt, m.collections.address, due, instructions.body.comment);
    const [report] = (await listen()).filter((r) => r.tenantId === m.tenantId);
    expect(report).toMatchObject({ payments: 1, unmatched: 0 });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect(await balanceOf(usdt, m.collections.address)).toBe(due);
    expect(await repaymentsOf(loan.id)).toHaveLength(1);

    // Again, and again from scratch (the cursor lost): nothing is credited twice.
    await listen();
    await t.db.delete(tonWalletCursors).where(eq(tonWalletCursors.tenantId, m.tenantId));
    await listen();
    expect(await repaymentsOf(loan.id)).toHaveLength(1);
    expect(await unmatchedOf(m.tenantId)).toHaveLength(0);
  });

  test("a repayment its loan's writer cannot apply is held and the wallet's cursor moves on: the tenant's next repayment is credited; the held one is tried again after a back-off and credited once (it stopped the tenant's COLLECTIONS wallet before)", async () => {
    const m = await liveTonTenant("Ton Held Ltd");
    const stuck = await m.liveLoan("100.00");
    const alsoStuck = await m.liveLoan("20.00");
    const fine = await m.liveLoan("50.00");
    const broken = new Set([stuck.loan.id, alsoStuck.loan.id]);
    const writer = {
      run: async (cmd: Parameters<typeof t.deps.writer.run>[0]) => {
        if ("loanId" in cmd && broken.has(cmd.loanId)) throw new Error(`the loan ${cmd.loanId} could not apply it (simulated)`);
        return t.deps.writer.run(cmd);
      },
    };
    const flakyListen = async (heldBudget?: { left: number }) =>
      (await pollTonCollections({ db: t.db, writer, clock: t.clock, network, master: usdt.master.toRawString(), heldBudget })).find(
        (r) => r.tenantId === m.tenantId,
      )!;
    const pay = async ({ loan, borrower }: typeof stuck) => {
      const instructions = (await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.liveKey) })).body;
      const due = BigInt(instructions.amountUnits);
      await usdt.mint(borrower.address, due);
      await payJettons(borrower, usdt, m.collections.address, due, instructions.comment);
    };
    const heldRows = () => t.db.select().from(heldPayments).where(eq(heldPayments.tenantId, m.tenantId));
    const base = t.clock.now().getTime();
    try {
      await pay(stuck);
      await pay(alsoStuck);
      await pay(fine);
      // A plain TON transfer naming the stuck loan is no USDT payment: kept as unmatched, never held (a retry would credit it as USDT).
      await stuck.borrower.send({ to: m.collections.address, value: toNano("3"), bounce: false, body: textComment(`svc:repay:${stuck.loan.id}`) });
      const report = await flakyListen();
      expect(report.error).toBeUndefined();
      expect(report).toMatchObject({ payments: 1, held: 2, unmatched: 1, heldError: expect.stringContaining("could not apply it") });
      expect(await unmatchedOf(m.tenantId)).toEqual([expect.objectContaining({ token: "TON", reason: "a TON transfer, not USDT" })]);
      expect(await loanOf(m.liveKey, fine.loan.id)).toMatchObject({ status: "REPAID" });
      expect(await loanOf(m.liveKey, stuck.loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
      expect(await heldRows()).toEqual([
        expect.objectContaining({ chain: "TON", kind: "payment", attempts: 1 }),
        expect.objectContaining({ chain: "TON", kind: "payment", attempts: 1 }),
      ]);

      // Not due yet: not tried; the cursor moved past them all, so nothing is read again.
      expect(await flakyListen()).toMatchObject({ transactions: 0, payments: 0 });
      broken.clear();
      t.clock.advance(heldBackoffMs(1));
      // A run tries at most its budget of held payments, across all the wallets it polls; the next run the rest.
      expect(await flakyListen({ left: 1 })).toMatchObject({ transactions: 0, payments: 1, heldApplied: 1 });
      expect(await heldRows()).toHaveLength(1);
      expect(await flakyListen({ left: 0 })).toMatchObject({ payments: 0 });
      expect(await flakyListen()).toMatchObject({ transactions: 0, payments: 1, heldApplied: 1 });
      expect(await heldRows()).toEqual([]);
      expect(await loanOf(m.liveKey, stuck.loan.id)).toMatchObject({ status: "REPAID" });
      expect(await loanOf(m.liveKey, alsoStuck.loan.id)).toMatchObject({ status: "REPAID" });
      expect(await repaymentsOf(stuck.loan.id)).toHaveLength(1);
      expect(await repaymentsOf(alsoStuck.loan.id)).toHaveLength(1);
      expect(await repaymentsOf(fine.loan.id)).toHaveLength(1);
      expect(await flakyListen()).toMatchObject({ payments: 0 });
    } finally {
      t.clock.set(new Date(base));
    }
  });

  test("a wrong comment, another jetton, a forged notification, a plain TON transfer: not credited, kept as unmatched; a bounced transfer: not credited, nothing kept", async () => {
    const m = await liveTonTenant("Ton Spoof Ltd");
    const { loan, borrower } = await m.liveLoan("100.00");
    const comment = `svc:repay:${loan.id}`;
    await usdt.mint(borrower.address, USDT(500));
    await fake.mint(borrower.address, USDT(500));

    await payJettons(borrower, usdt, m.collections.address, USDT(110), `${comment} `);
    await payJettons(borrower, fake, m.collections.address, USDT(110), comment);
    await borrower.send({ to: m.collections.address, value: toNano("3"), bounce: false, body: textComment(comment) });
    // A forged notification: the borrower's own contract claims a USDT arrival; only the collections wallet's USDT jetton wallet can send a real one.
    const forged = beginCell()
      .storeUint(JETTON_OP.transferNotification, 32)
      .storeUint(0, 64)
      .storeCoins(USDT(110))
      .storeAddress(borrower.address)
      .storeMaybeRef(textComment(comment))
      .endCell();
    await borrower.send({ to: m.collections.address, value: toNano("0.05"), bounce: false, body: forged });
    // More USDT than the borrower holds: its own jetton wallet refuses and bounces it; nothing reaches the collections wallet.
    await payJettons(borrower, usdt, m.collections.address, USDT(10_000), comment);
    // A message the COLLECTIONS wallet sent comes back bounced: its own TON returning, not a payment.
    await m.collections.send([{ to: Address.parseRaw(`0:${"ab".repeat(32)}`), value: toNano("1"), bounce: true }]);

    const [report] = (await listen()).filter((r) => r.tenantId === m.tenantId);
    expect(report).toMatchObject({ payments: 0, unmatched: 4 });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE" });
    expect(await repaymentsOf(loan.id)).toHaveLength(0);
    const kept = await unmatchedOf(m.tenantId);
    const fakeJettonWallet = (await jettonWalletOf(network, fake.master, m.collections.address)).toRawString();
    expect(
      kept.map((u) => ({ token: u.token, amount: u.amount, comment: u.comment, reason: u.reason })).sort((a, b) => a.reason.localeCompare(b.reason)),
    ).toEqual(
      [
        { token: fakeJettonWallet, amount: USDT(110), comment, reason: expect.stringContaining("not the USDT jetton wallet") },
        { token: "TON", amount: toNano("3"), comment, reason: "a TON transfer, not USDT" },
        { token: borrower.address.toRawString(), amount: USDT(110), comment, reason: expect.stringContaining("not the USDT jetton wallet") },
        { token: usdt.master.toRawString(), amount: USDT(110), comment: `${comment} `, reason: "the comment is not svc:repay:<loanId>" },
      ].sort((a, b) => String(a.reason).localeCompare(String(b.reason)) || a.token.localeCompare(b.token)),
    );
    expect(kept.every((u) => u.toAddress === m.collections.raw && u.chain === "TON")).toBe(true);
    // Only the real USDT can repay once attributed; the others moved no USDT (an audit attributed a forged notification and 0.0102 TON as USDT).
    const attribute = (id: string) => t.request("POST", `/v1/settlements/unmatched/${id}/attribute`, { body: { loanId: loan.id }, headers: bearer(m.token) });
    for (const u of kept.filter((k) => k.token !== usdt.master.toRawString())) {
      expect(u.settles).toBe(false);
      const refused = await attribute(u.id);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toContain("cannot repay a loan");
    }
    const listed = (await t.request("GET", "/v1/settlements/unmatched?limit=20", { headers: bearer(m.token) })).body.data as {
      token: string;
      settles: boolean;
      amount: string;
    }[];
    expect(listed.map((u) => u.settles).sort()).toEqual([false, false, false, true]);
    // Each in its own asset: 3 TON is "3.00" (it read "3000.00", nanotons shown as 10^-6 units); another jetton's
    // base units as they are (its decimals unknown); the settlement USDT in stablecoin units.
    expect(listed.find((u) => u.token === "TON")?.amount).toBe("3.00");
    expect(listed.find((u) => u.token === fakeJettonWallet)?.amount).toBe(String(USDT(110)));
    expect(listed.find((u) => u.token === usdt.master.toRawString())?.amount).toBe("110.00");
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE" });
    const real = kept.find((k) => k.token === usdt.master.toRawString())!;
    expect(real.settles).toBe(true);
    expect((await attribute(real.id)).status).toBe(200);
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect(await balanceOf(usdt, m.collections.address)).toBe(USDT(110));
    // Both refusals did happen on chain: the borrower keeps what it did not send, and the bounce reached the COLLECTIONS wallet.
    expect(await balanceOf(usdt, borrower.address)).toBe(USDT(100 + 500 - 110));
    const incoming = await network.transactions(m.collections.address, { limit: 20 });
    expect(incoming.some((tx) => tx.inMessage?.info.type === "internal" && tx.inMessage.info.bounced)).toBe(true);
  });

  test("a transfer of 0 USDT naming a loan (anyone may send one for the fee): no settlement, no unmatched row, the loan untouched (an audit found it credited as a payment of 0)", async () => {
    const m = await liveTonTenant("Ton Zero Ltd");
    const { loan, borrower } = await m.liveLoan("100.00");
    await payJettons(borrower, usdt, m.collections.address, 0n, `svc:repay:${loan.id}`);
    await payJettons(borrower, usdt, m.collections.address, 0n, "no comment of ours");
    const [report] = (await listen()).filter((r) => r.tenantId === m.tenantId);
    expect(report).toMatchObject({ payments: 0, unmatched: 0 });
    expect(report!.transactions).toBeGreaterThan(0);
    expect(await repaymentsOf(loan.id)).toHaveLength(0);
    expect(await unmatchedOf(m.tenantId)).toEqual([]);
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE", amountPaid: "0.00" });
  });

  test("another tenant's loan named in a payment to this tenant's COLLECTIONS wallet: not credited to either, kept for this tenant", async () => {
    const mine = await liveTonTenant("Ton Mine Ltd");
    const theirs = await liveTonTenant("Ton Theirs Ltd");
    const { loan: theirLoan } = await theirs.liveLoan("100.00");
    const { borrower } = await mine.liveLoan("100.00");
    await usdt.mint(borrower.address, USDT(200));
    await payJettons(borrower, usdt, mine.collections.address, USDT(110), `svc:repay:${theirLoan.id}`);
    await listen();
    expect(await loanOf(theirs.liveKey, theirLoan.id)).toMatchObject({ status: "ACTIVE" });
    expect(await repaymentsOf(theirLoan.id)).toHaveLength(0);
    expect(await unmatchedOf(mine.tenantId)).toMatchObject([{ claimedLoanId: theirLoan.id, reason: "no loan with this id", amount: USDT(110) }]);
    expect(await unmatchedOf(theirs.tenantId)).toHaveLength(0);
  });

  test("one COLLECTIONS wallet that cannot be read does not stop the others; its cursor stays and the next poll credits it", async () => {
    const a = await liveTonTenant("Ton Down Ltd");
    const b = await liveTonTenant("Ton Up Ltd");
    const paid = await Promise.all(
      [a, b].map(async (m) => {
        const { loan, borrower } = await m.liveLoan("100.00");
        await usdt.mint(borrower.address, USDT(2));
        await payJettons(borrower, usdt, m.collections.address, USDT(102), `svc:repay:${loan.id}`);
        return loan.id as string;
      }),
    );
    const read = network.transactions;
    network.transactions = async (address, options) => {
      if (address.equals(a.collections.address)) throw new Error("toncenter: 429 Too Many Requests");
      return read(address, options);
    };
    try {
      const reports = await listen();
      expect(reports.find((r) => r.tenantId === a.tenantId)).toMatchObject({ error: "toncenter: 429 Too Many Requests", payments: 0 });
      expect(reports.find((r) => r.tenantId === b.tenantId)).toMatchObject({ payments: 1 });
    } finally {
      network.transactions = read;
    }
    expect(await loanOf(a.liveKey, paid[0]!)).toMatchObject({ status: "ACTIVE" });
    expect(await loanOf(b.liveKey, paid[1]!)).toMatchObject({ status: "REPAID" });
    // The wallet read through is recorded as such (the sweep judges its tenant's TON loans up to then); the one that
    // failed is not, so a toncenter outage holds its tenant's loans back from overdue and default.
    const polledAt = t.clock.now().getTime();
    expect(await readThroughOf(a.tenantId)).toBeNull();
    expect(await readThroughOf(b.tenantId)).toBe(wholeSecondMs(polledAt - TON_READ_LAG_MS));
    expect((await listen()).find((r) => r.tenantId === a.tenantId)).toMatchObject({ payments: 1 });
    expect(await loanOf(a.liveKey, paid[0]!)).toMatchObject({ status: "REPAID" });
    expect(await readThroughOf(a.tenantId)).toBe(wholeSecondMs(polledAt - TON_READ_LAG_MS));
  });

  test("an RPC page shorter than asked before the cursor: the poll fails with the cursor kept (it was read as the end of history, skipping a repayment for good); whole pages then credit it", async () => {
    const m = await liveTonTenant("Ton Short Page Ltd");
    await listen();
    const { loan, borrower } = await m.liveLoan("100.00");
    await usdt.mint(borrower.address, USDT(2));
    await payJettons(borrower, usdt, m.collections.address, USDT(102), `svc:repay:${loan.id}`);
    for (let i = 0; i < 40; i++) await admin.send({ to: m.collections.address, value: 1_000_000n, bounce: false });
    const read = network.transactions;
    network.transactions = (address, options) => read(address, { ...options, limit: Math.min(options.limit, 16) });
    try {
      const report = (await listen()).find((r) => r.tenantId === m.tenantId);
      expect(report).toMatchObject({ payments: 0, error: expect.stringContaining("the cursor is kept") });
    } finally {
      network.transactions = read;
    }
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "ACTIVE" });
    expect((await listen()).find((r) => r.tenantId === m.tenantId)).toMatchObject({ payments: 1 });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
  });

  test("a backlog larger than one poll reads (anyone can send a wallet transactions) is read over several polls, oldest first: the repayment under it is credited and every transaction is read once (before, every poll failed for good)", async () => {
    const m = await liveTonTenant("Ton Backlog Ltd");
    await listen();
    const { loan, borrower } = await m.liveLoan("100.00");
    await usdt.mint(borrower.address, USDT(2));
    await payJettons(borrower, usdt, m.collections.address, USDT(102), `svc:repay:${loan.id}`);
    // 250 more transactions: one poll of one page (100) reads a fraction of them.
    const flooder = testV5Wallet(blockchain);
    await admin.send({ to: flooder.address, value: toNano("20"), bounce: false });
    await flooder.send(Array.from({ length: 250 }, () => ({ to: m.collections.address, value: 1_000_000n, bounce: false })));
    const poll = () =>
      pollTonWallet(
        { db: t.db, writer: t.deps.writer, clock: t.clock, network, master: usdt.master.toRawString(), maxPages: 1 },
        { tenantId: m.tenantId, address: m.collections.address.toRawString(), verifiedAt: t.clock.now() },
      );
    const reports = [];
    const readThrough: (number | null)[] = [];
    const before = await readThroughOf(m.tenantId);
    const start = t.clock.now();
    try {
      for (let i = 0; i < 8 && (reports.length === 0 || reports.at(-1)!.backlog !== undefined || reports.at(-1)!.transactions > 0); i++) {
        t.clock.advance(60_000);
        reports.push(await poll());
        readThrough.push((await readThroughOf(m.tenantId))! - before!);
      }
    } finally {
      // Sessions are checked against the system clock.
      t.clock.set(start);
    }
    // Two walks down (two waypoints), then the oldest part with the repayment, then the rest, then nothing.
    expect(reports.map((r) => r.backlog ?? 0)).toEqual([1, 2, 1, 0, 0, 0]);
    // Read through only by a walk from the newest transaction that reached the cursor: not during the backlog, nor by
    // its last walk (which ended at a waypoint an earlier poll read); from the next poll on, each one's start.
    expect(readThrough).toEqual([0, 0, 0, 0, 5 * 60_000, 6 * 60_000]);
    expect(reports[2]).toMatchObject({ payments: 1 });
    expect(await loanOf(m.liveKey, loan.id)).toMatchObject({ status: "REPAID" });
    expect(reports.reduce((sum, r) => sum + r.transactions, 0)).toBe(251);
    expect(reports.reduce((sum, r) => sum + r.payments, 0)).toBe(1);
    expect(await t.db.select().from(tonWalletBacklogs)).toEqual([]);
  });

  test("no verified COLLECTIONS wallet on TON: the instructions answer supported: false saying where repayments would go, never a platform address", async () => {
    const m = await liveTonTenant("Ton Nowhere Ltd");
    const { loan } = await m.liveLoan("100.00");
    expect((await t.request("DELETE", `/v1/wallets/${m.collectionsId}`, { headers: bearer(m.token) })).status).toBe(204);
    const res = await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.liveKey) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      chain: "TON",
      supported: false,
      reason: "repayments on TON go to the tenant's COLLECTIONS wallet: none is verified on TON yet (add one with POST /v1/wallets and verify it)",
    });
  });
});
