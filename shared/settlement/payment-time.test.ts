import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { CHAIN_CONFIG } from "../chains/chain-config.ts";
import type { ChainPort } from "../chains/chain-port.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { transfer } from "../sandbox/sandbox-chain.ts";
import { loadTenant } from "../tenants/tenant-context.ts";
import { sweepDueLoans } from "../sweeps/run-sweeps.ts";
import { bearer } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { pollChain } from "./listener.ts";

/**
 * When a repayment counts as made (apply-repayment.ts): at its transfer's
 * time, on the loan's clock (the tenant's sandbox clock for sandbox loans),
 * whenever the listener or an attribution gets to it. Each case is one the
 * service used to judge later than that (issue 15): after a sweep had already
 * recorded late fees, after the sandbox clock moved between the transfer and
 * the poll, and at an unmatched payment's keeping time plus the offset.
 *
 * All on TON_TESTNET: 10.00 lent for 3 days, 10.20 due, 1.00 late fee per
 * started day, 3 days of grace.
 */

const TON_WALLET = CHAIN_CONFIG.TON_TESTNET.settlementWallet!;

let t: TestApp;
let start: Date;
beforeAll(async () => {
  t = await createTestApp();
  // Whole seconds: block times are unix seconds, so every time below is exact. (Back, not forward:
  // session tokens are checked against real time; each test starts there again.)
  start = new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000);
  t.clock.set(start);
});
afterEach(() => t.clock.set(start));
afterAll(() => t.close());

type Merchant = Awaited<ReturnType<typeof tonMerchant>>;

async function tonMerchant() {
  const m = await sandboxTenant(t, "Payment Time");
  const config = await t.request("POST", "/v1/merchant-configs", {
    body: {
      network: "TON",
      stablecoin: "USDT",
      tenures: [3, 7, 15],
      minTicket: "10.00",
      maxTicket: "1000.00",
      gracePeriodDays: 3,
      processingFee: { type: "PERCENTAGE", value: "2.00" },
      lateFee: { type: "FIXED", value: "1.00" },
    },
    headers: bearer(m.token),
  });
  expect(config.status).toBe(201);
  expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "1000.00", stablecoin: "USDT" }, headers: apiKey(m.key) })).status).toBe(200);
  return { ...m, productId: config.body.loanProductId as string };
}

const newTonAddress = () => `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;

/** An ACTIVE TON loan of 10.00 for 3 days (10.20 due), its borrower holding 50 USDT. */
async function tonLoan(m: Merchant) {
  const loan = await createdLoan(t, m.key, {
    loanProductId: m.productId,
    chain: "TON_TESTNET",
    borrowerWalletAddress: newTonAddress(),
    principalAmount: "10.00",
    tenureDays: 3,
  });
  expect({ status: loan.status, totalDue: loan.totalDue }).toEqual({ status: "ACTIVE", totalDue: "10.20" });
  const res = await t.request("POST", "/v1/sandbox/chain/faucet", {
    body: { chain: "TON_TESTNET", address: loan.borrowerWalletAddress, amount: "50" },
    headers: apiKey(m.key),
  });
  expect(res.status).toBe(200);
  return loan as { id: string; borrowerWalletAddress: string; dueAt: string; fundedAt: string };
}

const getLoan = async (m: Merchant, id: string) => (await t.request("GET", `/v1/loans/${id}`, { headers: apiKey(m.key) })).body;
const typesOf = async (m: Merchant, id: string) =>
  ((await t.request("GET", `/v1/events?loanId=${id}&limit=100`, { headers: apiKey(m.key) })).body.data as { type: string }[]).map((e) => e.type).reverse();
const tenantNow = async (m: Merchant) => Date.parse((await t.request("GET", "/v1/sandbox/clock", { headers: apiKey(m.key) })).body.now);
const advance = async (m: Merchant, seconds: number) =>
  expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(m.key) })).status).toBe(200);
const poll = (m: Merchant, chain: ChainPort = t.deps.chain) =>
  pollChain({ db: t.db, chain, writer: t.deps.writer, clock: t.clock }, { chain: "TON_TESTNET", sandboxTenantId: m.tenantId });
const sweep = async () => expect((await sweepDueLoans({ db: t.db, writer: t.deps.writer, clock: t.clock })).failed).toBe(0);

/** A transfer through the sandbox helper, which polls the ledger at once. */
async function helperTransfer(m: Merchant, from: string, amount: string, comment: string | null) {
  const res = await t.request("POST", "/v1/sandbox/chain/transfers", {
    body: { chain: "TON_TESTNET", from, to: TON_WALLET, amount, comment },
    headers: apiKey(m.key),
  });
  expect(res.status).toBe(200);
  return res.body as { txHash: string; status: string };
}

/** A borrower's transfer straight onto the tenant's ledger at the tenant's time: the listener sees it at its next poll. */
async function unpolledTransfer(m: Merchant, from: string, amount: bigint, comment: string | null) {
  const sent = await t.simChains
    .chain("TON_TESTNET", m.tenantId)
    .transferToken({ from, to: TON_WALLET, amount, comment, sandboxTenantId: m.tenantId, at: new Date(await tenantNow(m)) });
  expect(sent.status).toBe("success");
  return sent;
}

/** The money fields of a loan as GET shows them, and its times in ms. */
const moneyOf = (l: any) => ({
  status: l.status,
  lateFeeDays: l.lateFeeDays,
  lateFee: l.lateFee,
  totalDue: l.totalDue,
  amountPaid: l.amountPaid,
  amountDue: l.amountDue,
  surplus: l.surplus,
  overdue: l.overdue,
  repaidAt: l.repaidAt === null ? null : Date.parse(l.repaidAt),
});

/** A 10.00 loan repaid in full on time at `repaidAt`, never overdue, as moneyOf shows it. */
const repaidOnTime = (repaidAt: number) => ({
  status: "REPAID",
  lateFeeDays: 0,
  lateFee: "0.00",
  totalDue: "10.20",
  amountPaid: "10.20",
  amountDue: "0.00",
  surplus: "0.00",
  overdue: false,
  repaidAt,
});

describe("a payment the listener sees after a sweep is judged at its transfer's time", () => {
  test("10.20 confirmed a minute before dueAt, swept a minute after, then polled: REPAID with no late fee, repaidAt the transfer's time", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    const dueAt = Date.parse(loan.dueAt);
    // Real time passes (the tenant's sandbox offset stays 0, as a live loan's clock).
    t.clock.set(new Date(dueAt - 60_000));
    await unpolledTransfer(m, loan.borrowerWalletAddress, 10_200_000n, `svc:repay:${loan.id}`);
    t.clock.set(new Date(dueAt + 60_000));
    await sweep();
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "ACTIVE", lateFeeDays: 1, amountDue: "11.20", overdue: true });

    await poll(m);
    // loan.overdue was sent before the payment was seen: it stays in the history, and so does the flag.
    expect(moneyOf(await getLoan(m, loan.id))).toEqual({ ...repaidOnTime(dueAt - 60_000), overdue: true });
    expect((await typesOf(m, loan.id)).slice(3)).toEqual(["loan.overdue", "loan.repaid"]);
  });

  test("paid on the first late day, seen after the sweep defaulted the loan: REPAID with that day's late fee; defaultedAt and loan.defaulted stay", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    const dueAt = Date.parse(loan.dueAt);
    t.clock.set(new Date(dueAt + 3_600_000));
    // 1 started day: 10.20 + 1.00.
    await unpolledTransfer(m, loan.borrowerWalletAddress, 11_200_000n, `svc:repay:${loan.id}`);
    t.clock.set(new Date(dueAt + 5 * DAY_MS));
    await sweep();
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "DEFAULTED", lateFeeDays: 3, amountDue: "13.20" });

    await poll(m);
    const after = await getLoan(m, loan.id);
    expect(moneyOf(after)).toEqual({
      status: "REPAID",
      lateFeeDays: 1,
      lateFee: "1.00",
      totalDue: "11.20",
      amountPaid: "11.20",
      amountDue: "0.00",
      surplus: "0.00",
      overdue: true,
      repaidAt: dueAt + 3_600_000,
    });
    expect(Date.parse(after.defaultedAt)).toBe(dueAt + 3 * DAY_MS);
    expect((await typesOf(m, loan.id)).slice(3)).toEqual(["loan.overdue", "loan.defaulted", "loan.repaid"]);
  });
});

describe("a sandbox transfer keeps the tenant's time it was made at, whenever the listener reads it", () => {
  test("the helper's own poll lost, then the sandbox clock advanced 5 days: the advance polls before its sweep, REPAID at the transfer's time, never overdue", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    const madeAt = await tenantNow(m);
    // The helper writes to the ledger, but its own poll reads nothing (as if it had read before the write landed).
    const blind: ChainPort = { ...t.deps.chain, readTransactions: async () => ({ transactions: [], head: 0 }) };
    const sent = await transfer(
      { db: t.db, chain: blind, writer: t.deps.writer, clock: t.clock, simChains: t.simChains },
      {
        tenant: await loadTenant(t.db, m.tenantId),
        chain: "TON_TESTNET",
        from: loan.borrowerWalletAddress,
        to: TON_WALLET,
        amount: "10.20",
        comment: `svc:repay:${loan.id}`,
      },
    );
    expect(sent.status).toBe("success");
    expect((await getLoan(m, loan.id)).status).toBe("ACTIVE");

    // The advance credits what is on the tenant's ledgers before it sweeps (it swept first, and a loan paid on time
    // got loan.overdue, then loan.repaid).
    await advance(m, 5 * 86_400);
    expect(moneyOf(await getLoan(m, loan.id))).toEqual(repaidOnTime(madeAt));
    await poll(m);
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "REPAID", amountPaid: "10.20", overdue: false });
  });

  test("after an advance, a payment through the helper is judged on the advanced clock (the offset as it is at the transfer)", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    await advance(m, 2 * 86_400);
    const madeAt = await tenantNow(m);
    await helperTransfer(m, loan.borrowerWalletAddress, "10.20", `svc:repay:${loan.id}`);
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "REPAID", lateFeeDays: 0, repaidAt: madeAt });
  });
});

describe("an attributed payment is judged at its transfer's time", () => {
  test("kept for naming no loan, the clock advanced past due, then attributed: REPAID at the transfer's time, no late fee", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    t.clock.advance(3_600_000);
    const madeAt = await tenantNow(m);
    const kept = await helperTransfer(m, loan.borrowerWalletAddress, "10.20", null);
    await advance(m, 5 * 86_400);
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "ACTIVE", lateFeeDays: 3 });

    const row = ((await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data as any[]).find(
      (u) => u.txHash === kept.txHash,
    );
    const res = await t.request("POST", `/v1/settlements/unmatched/${row.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(m.token) });
    expect(res.status).toBe(200);
    expect(moneyOf(await getLoan(m, loan.id))).toEqual({ ...repaidOnTime(madeAt), overdue: true });
    // The kept payment shows when it was made: the time it was judged at.
    expect(Date.parse(row.paidAt)).toBe(madeAt);
  });

  test("advance 10 days, a payment kept for a REPAID loan, attributed to a loan funded later: REPAID, never judged in the tenant's future", async () => {
    const m = await tonMerchant();
    await advance(m, 10 * 86_400);
    const first = await tonLoan(m);
    await helperTransfer(m, first.borrowerWalletAddress, "10.20", `svc:repay:${first.id}`);
    expect((await getLoan(m, first.id)).status).toBe("REPAID");
    // Paid again to the REPAID loan: kept.
    const kept = await helperTransfer(m, first.borrowerWalletAddress, "10.20", `svc:repay:${first.id}`);
    t.clock.advance(3_600_000);
    const second = await tonLoan(m);

    const row = ((await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data as any[]).find(
      (u) => u.txHash === kept.txHash,
    );
    const res = await t.request("POST", `/v1/settlements/unmatched/${row.id}/attribute`, { body: { loanId: second.id }, headers: bearer(m.token) });
    expect(res.status).toBe(200);
    // Made before the loan was funded: it counts from the funding, never before.
    expect(moneyOf(await getLoan(m, second.id))).toEqual(repaidOnTime(Date.parse(second.fundedAt)));
    // Seven days on, nothing is owed, nothing defaults.
    await advance(m, 7 * 86_400);
    expect(moneyOf(await getLoan(m, second.id))).toMatchObject({ status: "REPAID", amountDue: "0.00", lateFee: "0.00" });
  });

  test("an old payment attributed after a later partial counts from the later one: it cannot waive the late fee the later one owed", async () => {
    const m = await tonMerchant();
    const loan = await tonLoan(m);
    // 5.20 without a loan reference, before due: kept.
    const kept = await helperTransfer(m, loan.borrowerWalletAddress, "5.20", null);
    await advance(m, 3 * 86_400 + 3600);
    // 5.00 with the comment, on the first late day (11.20 due): a partial payment.
    await helperTransfer(m, loan.borrowerWalletAddress, "5.00", `svc:repay:${loan.id}`);
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "ACTIVE", lateFeeDays: 1, amountDue: "6.20" });

    const row = ((await t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(m.key) })).body.data as any[]).find(
      (u) => u.txHash === kept.txHash,
    );
    expect((await t.request("POST", `/v1/settlements/unmatched/${row.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(m.token) })).status).toBe(
      200,
    );
    // At the partial's time 11.20 was due and 10.20 had arrived: 1.00 still due, not REPAID before due.
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({
      status: "ACTIVE",
      lateFeeDays: 1,
      amountPaid: "10.20",
      amountDue: "1.00",
      repaidAt: null,
    });
  });
});

describe("lateness is judged to the second, as the chain dates a payment", () => {
  test("funded at .400, due at .400 a tenure later; half a second after dueAt the loan and its instructions ask what a payment the chain dates in that second owes (no late day): paid as instructed, REPAID with no surplus (it asked a day's late fee and left it as a surplus)", async () => {
    const m = await tonMerchant();
    t.clock.set(new Date(start.getTime() + 400));
    const loan = await tonLoan(m);
    const dueAt = Date.parse(loan.dueAt);
    expect(dueAt % 1000).toBe(400);
    t.clock.set(new Date(dueAt + 500));
    expect(moneyOf(await getLoan(m, loan.id))).toMatchObject({ status: "ACTIVE", lateFee: "0.00", totalDue: "10.20", amountDue: "10.20" });
    const instructions = await t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(m.key) });
    expect(instructions.body).toMatchObject({ amount: "10.200000", amountUnits: "10200000" });
    await helperTransfer(m, loan.borrowerWalletAddress, instructions.body.amount, `svc:repay:${loan.id}`);
    expect(moneyOf(await getLoan(m, loan.id))).toEqual(repaidOnTime(dueAt - 400));

    // From the next whole second on, a started late day, in the view and for a payment alike.
    const late = await tonLoan(m);
    const lateDue = Date.parse(late.dueAt);
    t.clock.set(new Date(lateDue + 600));
    expect(moneyOf(await getLoan(m, late.id))).toMatchObject({ lateFee: "1.00", amountDue: "11.20" });
    const owed = await t.request("POST", `/v1/loans/${late.id}/repay`, { headers: apiKey(m.key) });
    expect(owed.body).toMatchObject({ amount: "11.200000" });
    await helperTransfer(m, late.borrowerWalletAddress, owed.body.amount, `svc:repay:${late.id}`);
    expect(moneyOf(await getLoan(m, late.id))).toMatchObject({ status: "REPAID", lateFee: "1.00", amountPaid: "11.20", surplus: "0.00" });
  });
});
