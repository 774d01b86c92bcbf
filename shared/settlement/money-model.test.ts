import { expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { sandboxLedgers } from "../../db/schema/settlement-tracking.ts";
import { sweepDueLoans } from "../sweeps/run-sweeps.ts";
import { bearer } from "../testing/fixtures.ts";
import { apiKey } from "../testing/loan-fixtures.ts";
import {
  attribute,
  balanceOf,
  credit,
  DAY_MS,
  decimal,
  dueNow,
  feeUnits,
  include,
  lateDaysAt,
  type ModelLoan,
  type MoneyModel,
  move,
  type PendingObservation,
  processPending,
  RAILS,
  type Rail,
  STABLECOIN_OF,
  sweep,
  tenantNow,
  type Terms,
  UNITS,
} from "../testing/money-model.ts";
import {
  approve,
  approveCall,
  checkInvariants,
  EVM_POOL,
  faucet,
  NETWORK,
  ok,
  OTHER_JETTON,
  repay,
  repayCall,
  sendEvm,
  sendTon,
  setUp,
  TON_TOKEN,
  TON_WALLET,
  transferCall,
  type World,
} from "../testing/money-world.ts";
import { pollChain } from "./listener.ts";

/**
 * Model-based test of the money (issue 15): random sequences of commands
 * against the real api app over libSQL, the real settlement listener and the
 * real overdue/default sweep on the same database, clock and simulated
 * ledgers, each step checked against the plain model of
 * shared/testing/money-model.ts to the base unit (the checks:
 * `checkInvariants` in shared/testing/money-world.ts):
 * - every loan as GET /v1/loans shows it (status, amounts paid and due, late
 *   fees, surplus, overdue, due/repaid/defaulted times), its settlement
 *   history and the events committed for it, in order;
 * - the unmatched payments kept for the tenant;
 * - every balance on the simulated ledgers (pool or settlement wallet,
 *   borrowers, another wallet, another jetton), and their sum: constant
 *   apart from the faucet's mints;
 * - the liquidity pools: initial − principal funded + what loans repaid;
 * - what reached the pool on chain is what the service credited, kept as
 *   surplus or kept unmatched (nothing dropped).
 *
 * Fast-check prints the seed and the shrunk command list when it fails.
 */

/** Fixed; MONEY_MODEL_RUNS overrides it for a longer local search. */
const NUM_RUNS = Number(process.env.MONEY_MODEL_RUNS ?? 20);
const MAX_COMMANDS = 28;
const DAY_S = DAY_MS / 1000;

// --- commands ------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<MoneyModel, World>;

/** A model loan picked by a generated index (modulo the loans there are). */
const pick = <T>(xs: T[], i: number): T => xs[i % xs.length]!;

const FEES = fc.constantFrom<Terms["processingFee"]>(
  { type: "PERCENTAGE", value: "2.00" },
  { type: "PERCENTAGE", value: "3.33" },
  { type: "PERCENTAGE", value: "0.75" },
  { type: "FIXED", value: "1.50" },
  { type: "FIXED", value: "0.00" },
);
const LATE_FEES = fc.constantFrom<Terms["lateFee"]>(
  { type: "FIXED", value: "1.00" },
  { type: "FIXED", value: "0.25" },
  { type: "PERCENTAGE", value: "1.25" },
  { type: "PERCENTAGE", value: "0.10" },
);

class CreateLoan implements Cmd {
  constructor(
    readonly rail: Rail,
    readonly tenureDays: 3 | 7 | 15,
    readonly principalCents: number,
  ) {}
  check = (m: MoneyModel) => m.loans.length < 8;
  async run(m: MoneyModel, w: World) {
    const principal = BigInt(this.principalCents) * 10_000n;
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = this.rail === "POLYGON_AMOY" ? account.address : `0:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    const loan = await ok(
      w.t.request("POST", "/v1/loans", {
        body: {
          loanProductId: w.productId[this.rail],
          borrowerRef: `money-model-${m.loans.length}`,
          borrowerWalletAddress: wallet,
          chain: this.rail,
          principalAmount: decimal(principal, 2),
          idempotencyKey: crypto.randomUUID(),
          tenureDays: this.tenureDays,
        },
        headers: apiKey(w.key),
      }),
      201,
      "create loan",
    );
    const terms = m.terms[this.rail];
    const at = tenantNow(m);
    const model: ModelLoan = {
      id: loan.id,
      chain: this.rail,
      borrower: loan.borrowerWalletAddress,
      principal,
      processingFee: feeUnits(principal, terms.processingFee),
      dailyLateFee: feeUnits(principal, terms.lateFee),
      tenureDays: this.tenureDays,
      gracePeriodDays: terms.gracePeriodDays,
      fundedAt: at,
      dueAt: at + this.tenureDays * DAY_MS,
      status: "ACTIVE",
      overdue: false,
      lateFeeDays: 0,
      paid: 0n,
      surplus: 0n,
      repaidAt: null,
      defaultedAt: null,
      settlements: [{ kind: "FUNDING", status: "CONFIRMED", amount: principal, txHash: loan.fundingTxHash, paidAt: at }],
      events: ["loan.application_submitted", "loan.decision", "loan.funded"],
    };
    m.loans.push(model);
    if (this.rail === "POLYGON_AMOY") w.accounts.set(model.borrower, account);
    // The principal leaves the pool (EVM) or the settlement wallet (TON) for the borrower, on chain and in the books.
    expect(move(m, this.rail, m.receivers[this.rail], model.borrower, principal)).toBe(true);
    m.pools[STABLECOIN_OF[this.rail]] -= principal;
    // Funding is a transaction the listener reads past (not a payment).
    include(m, this.rail, loan.fundingTxHash, null, false);
    await checkInvariants(m, w);
  }
  toString = () => `CreateLoan(${this.rail}, ${this.tenureDays}d, ${this.principalCents}c)`;
}

class SetTerms implements Cmd {
  constructor(
    readonly rail: Rail,
    readonly terms: Terms,
  ) {}
  check = () => true;
  async run(m: MoneyModel, w: World) {
    const saved = await ok(
      w.t.request("PUT", `/v1/merchant-configs/${w.configId[this.rail]}`, {
        body: {
          network: NETWORK[this.rail],
          stablecoin: STABLECOIN_OF[this.rail],
          tenures: [3, 7, 15],
          minTicket: "10.00",
          maxTicket: "1000.00",
          ...this.terms,
        },
        headers: bearer(w.token),
      }),
      200,
      "merchant config",
    );
    w.productId[this.rail] = saved.loanProductId;
    m.terms[this.rail] = this.terms;
    await checkInvariants(m, w);
  }
  toString = () => `SetTerms(${this.rail}, ${JSON.stringify(this.terms)})`;
}

type PayShape = { kind: "partial"; permille: number } | { kind: "exact" } | { kind: "excess"; extraUnits: number };

/**
 * The borrower pays `shape` of what is due now, through the sandbox helper or
 * straight onto the ledger (then the listener's poll applies it), topping the
 * wallet up from the faucet first when `topUp` (else a shortfall fails).
 */
class Pay implements Cmd {
  constructor(
    readonly loan: number,
    readonly shape: PayShape,
    readonly direct: boolean,
    readonly topUp: boolean,
  ) {}
  check = (m: MoneyModel) => m.loans.length > 0;
  async run(m: MoneyModel, w: World) {
    const loan = pick(m.loans, this.loan);
    const due = dueNow(loan, tenantNow(m));
    // The instructions name what is due now; a REPAID loan takes none (409).
    const instructions = await w.t.request("POST", `/v1/loans/${loan.id}/repay`, { headers: apiKey(w.key) });
    if (due === 0n) expect(instructions.status).toBe(409);
    else {
      expect({ status: instructions.status, amountUnits: instructions.body.amountUnits }).toEqual({ status: 200, amountUnits: String(due) });
      // What the borrower is told to sign or send is exactly that: approve and repay to the pool, or the exact comment.
      if (loan.chain === "POLYGON_AMOY") {
        const calls = instructions.body.transactions.map((tx: any) => ({ to: tx.to, data: tx.data }));
        expect(calls).toEqual([approveCall(due), repayCall(loan.id, EVM_POOL, due)]);
      } else expect(instructions.body.comment).toBe(`svc:repay:${loan.id}`);
    }
    const base = due === 0n ? 5n * UNITS : due;
    const amount =
      this.shape.kind === "exact"
        ? base
        : this.shape.kind === "partial"
          ? [1n, (base * BigInt(this.shape.permille)) / 1000n].reduce((a, b) => (a > b ? a : b))
          : base + BigInt(this.shape.extraUnits);
    const held = balanceOf(m, loan.chain, loan.borrower);
    if (this.topUp && held < amount) await faucet(m, w, loan.chain, loan.borrower, amount - held);
    if (loan.chain === "POLYGON_AMOY") {
      await approve(m, w, loan.borrower, amount, this.direct);
      await repay(m, w, loan.borrower, loan.id, EVM_POOL, amount, this.direct);
    } else {
      const comment = `svc:repay:${loan.id}`;
      const res = await sendTon(m, w, { from: loan.borrower, to: TON_WALLET, amount, comment }, this.direct);
      const covered = move(m, "TON_TESTNET", loan.borrower, TON_WALLET, amount);
      expect({ transfer: res.status }).toEqual({ transfer: covered ? "success" : "failed" });
      include(
        m,
        "TON_TESTNET",
        res.txHash,
        covered ? { kind: "payment", loanId: loan.id, amount, from: loan.borrower } : { kind: "failed", loanId: loan.id, amount },
        !this.direct,
      );
    }
    await checkInvariants(m, w);
  }
  toString = () => `Pay(loan ${this.loan}, ${JSON.stringify(this.shape)}, ${this.direct ? "direct" : "helper"}${this.topUp ? ", topUp" : ""})`;
}

type Stray = "noAllowance" | "noBalance" | "elsewhere" | "unnamed" | "otherLoanId" | "unknownLoanId" | "otherToken";

/**
 * A payment that repays nothing: a repay without allowance or balance
 * (failed), one paying another address, a transfer to the receiver naming no
 * loan or a loan of another chain or no loan at all (kept unmatched), another
 * jetton with the right comment (ignored).
 */
class StrayPayment implements Cmd {
  constructor(
    readonly loan: number,
    readonly stray: Stray,
    readonly amountCents: number,
    readonly direct: boolean,
  ) {}
  check = (m: MoneyModel) => m.loans.length > 0;
  async run(m: MoneyModel, w: World) {
    const loan = pick(m.loans, this.loan);
    const rail = loan.chain;
    const from = loan.borrower;
    const held = balanceOf(m, rail, from);
    // TON has no allowance: a transfer the wallet cannot cover is its failed repayment.
    const stray = rail === "TON_TESTNET" && this.stray === "noAllowance" ? "noBalance" : this.stray;
    const amount = stray === "noBalance" ? held + BigInt(this.amountCents) * 10_000n + 1n : BigInt(this.amountCents) * 10_000n;
    const otherLoan = m.loans.find((l) => l.chain !== rail);
    if (rail === "POLYGON_AMOY") {
      switch (this.stray) {
        case "noAllowance":
          if (m.allowances.get(from)) await approve(m, w, from, 0n, this.direct);
          await repay(m, w, from, loan.id, EVM_POOL, amount, this.direct);
          break;
        case "noBalance":
          await approve(m, w, from, amount, this.direct);
          await repay(m, w, from, loan.id, EVM_POOL, amount, this.direct);
          break;
        case "elsewhere":
          await approve(m, w, from, amount, this.direct);
          await repay(m, w, from, loan.id, w.elsewhere[rail], amount, this.direct);
          break;
        case "otherLoanId":
        case "unknownLoanId":
          // The pool's repay naming a loan of the other chain, or no loan of this tenant.
          await approve(m, w, from, amount, this.direct);
          await repay(m, w, from, this.stray === "otherLoanId" ? (otherLoan?.id ?? crypto.randomUUID()) : crypto.randomUUID(), EVM_POOL, amount, this.direct);
          break;
        default: {
          // A plain transfer to the pool: money received that names no loan.
          const res = await sendEvm(m, w, from, transferCall(EVM_POOL, amount), this.direct);
          const covered = move(m, rail, from, EVM_POOL, amount);
          expect({ transfer: res.status }).toEqual({ transfer: covered ? "success" : "reverted" });
          include(m, rail, res.txHash, covered ? { kind: "payment", loanId: null, amount, from } : null, !this.direct);
        }
      }
    } else {
      const unknown = crypto.randomUUID();
      const named = { otherLoanId: otherLoan?.id ?? unknown, unknownLoanId: unknown } as Record<string, string>;
      const comment = stray === "unnamed" ? null : stray === "otherLoanId" || stray === "unknownLoanId" ? `svc:repay:${named[stray]}` : `svc:repay:${loan.id}`;
      const token = stray === "otherToken" ? OTHER_JETTON : undefined;
      if (token) {
        await w.t.simChains.chain(rail, w.tenantId).faucet({ address: from, amount, token, sandboxTenantId: w.tenantId, at: new Date(tenantNow(m)) });
        credit(m, rail, from, amount, token);
      }
      const to = stray === "elsewhere" ? w.elsewhere[rail] : TON_WALLET;
      const res = await sendTon(m, w, { from, to, amount, comment, ...(token ? { token } : {}) }, this.direct);
      const covered = move(m, rail, from, to, amount, token ?? TON_TOKEN);
      expect({ transfer: res.status }).toEqual({ transfer: covered ? "success" : "failed" });
      const claimed = comment === null ? null : comment.slice("svc:repay:".length);
      const observation: PendingObservation | null =
        token || to !== TON_WALLET ? null : covered ? { kind: "payment", loanId: claimed, amount, from } : { kind: "failed", loanId: claimed!, amount };
      include(m, rail, res.txHash, observation, !this.direct);
    }
    await checkInvariants(m, w);
  }
  toString = () => `StrayPayment(loan ${this.loan}, ${this.stray}, ${this.amountCents}c, ${this.direct ? "direct" : "helper"})`;
}

type Advance = { kind: "by"; seconds: number } | { kind: "to"; loan: number; anchor: "due" | "graceEnd"; deltaS: number };

function secondsFor(m: MoneyModel, a: Advance): number {
  if (a.kind === "by" || m.loans.length === 0) return a.kind === "by" ? a.seconds : 3600;
  const loan = pick(m.loans, a.loan);
  const target = (a.anchor === "due" ? loan.dueAt : loan.dueAt + loan.gracePeriodDays * DAY_MS) + a.deltaS * 1000;
  return Math.max(1, Math.ceil((target - tenantNow(m)) / 1000));
}

/**
 * The tenant's sandbox clock moves (POST /v1/sandbox/clock/advance): the tenant's ledgers are polled, then the sweep
 * runs on the new time, before the answer.
 */
class AdvanceSandboxClock implements Cmd {
  constructor(readonly advance: Advance) {}
  check = () => true;
  async run(m: MoneyModel, w: World) {
    const seconds = secondsFor(m, this.advance);
    await ok(w.t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(w.key) }), 200, "advance");
    m.offsetMs += seconds * 1000;
    for (const rail of RAILS) processPending(m, rail);
    sweep(m.loans, tenantNow(m));
    await checkInvariants(m, w);
  }
  toString = () => `AdvanceSandboxClock(${JSON.stringify(this.advance)})`;
}

/** Real time passes (the system clock): blocks are stamped later; nothing is swept until the sweep runs. */
class AdvanceSystemClock implements Cmd {
  constructor(readonly advance: Advance) {}
  check = () => true;
  async run(m: MoneyModel, w: World) {
    const seconds = secondsFor(m, this.advance);
    w.t.clock.advance(seconds * 1000);
    m.sysMs += seconds * 1000;
    await checkInvariants(m, w);
  }
  toString = () => `AdvanceSystemClock(${JSON.stringify(this.advance)})`;
}

/** The cron's overdue/default sweep. */
class Sweep implements Cmd {
  check = () => true;
  async run(m: MoneyModel, w: World) {
    const report = await sweepDueLoans({ db: w.t.db, writer: w.t.deps.writer, clock: w.t.clock });
    expect(report.failed).toBe(0);
    sweep(m.loans, tenantNow(m));
    await checkInvariants(m, w);
  }
  toString = () => "Sweep";
}

/**
 * The cron's settlement poll of the tenant's ledgers; `fromGenesis` first
 * resets their cursors, so the listener reads every transaction again (as
 * after a lost cursor): nothing may be credited, failed or kept twice.
 */
class Poll implements Cmd {
  constructor(readonly fromGenesis: boolean) {}
  check = () => true;
  async run(m: MoneyModel, w: World) {
    if (this.fromGenesis) await w.t.db.update(sandboxLedgers).set({ lastBlock: 0 }).where(eq(sandboxLedgers.tenantId, w.tenantId));
    for (const rail of RAILS) {
      await pollChain({ db: w.t.db, chain: w.t.deps.chain, writer: w.t.deps.writer, clock: w.t.clock }, { chain: rail, sandboxTenantId: w.tenantId });
      processPending(m, rail);
    }
    await checkInvariants(m, w);
  }
  toString = () => (this.fromGenesis ? "Poll(from genesis)" : "Poll");
}

type AttributionTarget = "awaiting" | "sameChain" | "any";

/**
 * An Owner attributes a kept payment to a loan (POST /v1/settlements/unmatched/:id/attribute):
 * mostly to a loan of the payment's chain still awaiting repayment, sometimes to any loan of
 * its chain (a REPAID one: 409) or of any chain (another chain: 400).
 */
class Attribute implements Cmd {
  constructor(
    readonly unmatched: number,
    readonly loan: number,
    readonly target: AttributionTarget,
  ) {}
  check = (m: MoneyModel) => m.unmatched.length > 0 && m.loans.length > 0;
  async run(m: MoneyModel, w: World) {
    const kept = pick(m.unmatched, this.unmatched);
    const sameChain = m.loans.filter((l) => l.chain === kept.chain);
    const awaiting = sameChain.filter((l) => l.status !== "REPAID");
    const candidates = this.target === "awaiting" && awaiting.length > 0 ? awaiting : this.target !== "any" && sameChain.length > 0 ? sameChain : m.loans;
    const loan = pick(candidates, this.loan);
    const rows = (await ok(w.t.request("GET", "/v1/settlements/unmatched?limit=100", { headers: apiKey(w.key) }))).data;
    const row = rows.find((u: any) => u.txHash === kept.txHash);
    const res = await w.t.request("POST", `/v1/settlements/unmatched/${row.id}/attribute`, { body: { loanId: loan.id }, headers: bearer(w.token) });
    expect({ attribute: res.status }).toEqual({ attribute: attribute(m, kept, loan) });
    await checkInvariants(m, w);
  }
  toString = () => `Attribute(unmatched ${this.unmatched}, ${this.target} loan ${this.loan})`;
}

const advances = fc.oneof(
  fc.record({ kind: fc.constant("by" as const), seconds: fc.constantFrom(1, 60, 3600, DAY_S, DAY_S + 1, 3 * DAY_S, 8 * DAY_S) }),
  fc.record({
    kind: fc.constant("to" as const),
    loan: fc.nat(7),
    anchor: fc.constantFrom("due" as const, "graceEnd" as const),
    deltaS: fc.constantFrom(-DAY_S, -3600, -1, 0, 1, 3600, DAY_S + 1),
  }),
);

const createLoan = fc
  .tuple(fc.constantFrom<Rail>(...RAILS), fc.constantFrom<3 | 7 | 15>(3, 7, 15), fc.integer({ min: 1_000, max: 100_000 }))
  .map(([rail, tenure, cents]) => new CreateLoan(rail, tenure, cents));
const setTerms = fc
  .tuple(fc.constantFrom<Rail>(...RAILS), fc.constantFrom(0, 0, 1, 2, 3), FEES, LATE_FEES)
  .map(([rail, gracePeriodDays, processingFee, lateFee]) => new SetTerms(rail, { gracePeriodDays, processingFee, lateFee }));
const pay = fc
  .tuple(
    fc.nat(7),
    fc.oneof(
      fc.record({ kind: fc.constant("partial" as const), permille: fc.integer({ min: 1, max: 999 }) }),
      fc.constant({ kind: "exact" as const }),
      fc.record({ kind: fc.constant("excess" as const), extraUnits: fc.integer({ min: 1, max: 50_000_000 }) }),
    ),
    fc.boolean(),
    // Mostly topped up first: a payment the wallet cannot cover is a failure, which the strays cover too.
    fc.constantFrom(true, true, true, false),
  )
  .map(([loan, shape, direct, topUp]) => new Pay(loan, shape, direct, topUp));
const strayPayment = fc
  .tuple(
    fc.nat(7),
    fc.constantFrom<Stray>("noAllowance", "noBalance", "elsewhere", "unnamed", "otherLoanId", "unknownLoanId", "otherToken"),
    fc.integer({ min: 1, max: 20_000 }),
    fc.boolean(),
  )
  .map(([loan, stray, cents, direct]) => new StrayPayment(loan, stray, cents, direct));

const attribution = fc
  .tuple(fc.nat(7), fc.nat(7), fc.constantFrom<AttributionTarget>("awaiting", "awaiting", "awaiting", "sameChain", "any"))
  .map(([u, l, target]) => new Attribute(u, l, target));

/** Weighted by repetition: loans and payments come often, so runs reach repayment, default and recovery. */
const commands = [
  createLoan,
  createLoan,
  createLoan,
  setTerms,
  pay,
  pay,
  pay,
  pay,
  strayPayment,
  strayPayment,
  advances.map((a) => new AdvanceSandboxClock(a)),
  advances.map((a) => new AdvanceSandboxClock(a)),
  advances.map((a) => new AdvanceSystemClock(a)),
  fc.constant(new Sweep()),
  fc.boolean().map((fromGenesis) => new Poll(fromGenesis)),
  fc.constant(new Poll(false)),
  attribution,
  attribution,
];

/** Runs `cmds` in a fresh world, checking every step; returns the model at the end. */
async function runScenario(cmds: Cmd[]): Promise<MoneyModel> {
  const { model, world } = await setUp();
  try {
    await fc.asyncModelRun(() => ({ model, real: world }), cmds);
    return model;
  } finally {
    world.t.close();
  }
}

test(
  "the money, step by step: loans, payments, late fees, default, unmatched payments and attributions against a plain model",
  async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: MAX_COMMANDS, size: "max" }), async (cmds) => {
        await runScenario([...cmds]);
      }),
      { numRuns: NUM_RUNS },
    );
  },
  process.env.MONEY_MODEL_RUNS ? 1_800_000 : 120_000,
);

// Paths every run of the suite takes, whatever the random runs draw; each step is still checked
// against the model, and the end states below say what the model (the spec) expects.
const DEFAULT_TERMS: Terms = { gracePeriodDays: 3, processingFee: { type: "PERCENTAGE", value: "2.00" }, lateFee: { type: "FIXED", value: "1.00" } };

test("found by the model: a repayment finer than a cent back in the pool, then another loan from that pool (was a 500)", async () => {
  const m = await runScenario([
    new CreateLoan("POLYGON_AMOY", 3, 1000),
    new Pay(0, { kind: "partial", permille: 1 }, false, true),
    new CreateLoan("POLYGON_AMOY", 3, 1000),
  ]);
  expect(m.loans.map((l) => [l.status, l.paid])).toEqual([
    ["ACTIVE", 10_200n],
    ["ACTIVE", 0n],
  ]);
});

test("grace 0: DEFAULTED at dueAt with no late fee, then a payment recovers it to REPAID with its surplus", async () => {
  const m = await runScenario([
    new SetTerms("TON_TESTNET", { ...DEFAULT_TERMS, gracePeriodDays: 0 }),
    new CreateLoan("TON_TESTNET", 7, 5_000),
    new AdvanceSandboxClock({ kind: "to", loan: 0, anchor: "due", deltaS: 1 }),
    new Pay(0, { kind: "excess", extraUnits: 1_000_000 }, false, true),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, lateFeeDays: loan!.lateFeeDays, paid: loan!.paid, surplus: loan!.surplus, defaultedAt: loan!.defaultedAt }).toEqual({
    status: "REPAID",
    lateFeeDays: 0,
    paid: 51_000_000n,
    surplus: 1_000_000n,
    defaultedAt: loan!.dueAt,
  });
  expect(loan!.events.slice(3)).toEqual(["loan.overdue", "loan.defaulted", "loan.repaid"]);
});

test("paid past dueAt + grace before any sweep ran: overdue and DEFAULTED as of the payment's time, then recovered to REPAID (an audit saw it skip both)", async () => {
  const m = await runScenario([
    new SetTerms("POLYGON_AMOY", { ...DEFAULT_TERMS, gracePeriodDays: 0 }),
    new CreateLoan("POLYGON_AMOY", 3, 10_000),
    // The system clock (no sweep runs) to a second past dueAt, which with grace 0 is the default time.
    new AdvanceSystemClock({ kind: "to", loan: 0, anchor: "due", deltaS: 1 }),
    new Pay(0, { kind: "exact" }, false, true),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, defaultedAt: loan!.defaultedAt, lateFeeDays: loan!.lateFeeDays, surplus: loan!.surplus }).toEqual({
    status: "REPAID",
    defaultedAt: loan!.dueAt,
    lateFeeDays: 0,
    surplus: 0n,
  });
  expect(loan!.events.slice(3)).toEqual(["loan.overdue", "loan.defaulted", "loan.repaid"]);
});

test("paid a day into the grace period before any sweep ran: loan.overdue as of the payment's time, then REPAID with that day's late fee", async () => {
  const m = await runScenario([
    new CreateLoan("TON_TESTNET", 7, 5_000),
    new AdvanceSystemClock({ kind: "to", loan: 0, anchor: "due", deltaS: 86_400 + 5 }),
    new Pay(0, { kind: "exact" }, false, true),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, defaultedAt: loan!.defaultedAt, lateFeeDays: loan!.lateFeeDays }).toEqual({
    status: "REPAID",
    defaultedAt: null,
    lateFeeDays: 2,
  });
  expect(loan!.events.slice(3)).toEqual(["loan.overdue", "loan.repaid"]);
});

test("the last second of grace is still ACTIVE with every late-fee day; the next one defaults; a late partial then the rest repays", async () => {
  const m = await runScenario([
    new CreateLoan("POLYGON_AMOY", 3, 10_000),
    new AdvanceSandboxClock({ kind: "to", loan: 0, anchor: "due", deltaS: 3600 }),
    new Pay(0, { kind: "partial", permille: 500 }, true, true),
    new Poll(false),
    new AdvanceSystemClock({ kind: "to", loan: 0, anchor: "graceEnd", deltaS: 0 }),
    new Sweep(),
    new AdvanceSandboxClock({ kind: "by", seconds: 1 }),
    new Pay(0, { kind: "exact" }, false, true),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, lateFeeDays: loan!.lateFeeDays, paid: loan!.paid, surplus: loan!.surplus }).toEqual({
    status: "REPAID",
    lateFeeDays: 3,
    paid: 105_000_000n,
    surplus: 0n,
  });
  expect(loan!.settlements.map((s) => s.kind)).toEqual(["FUNDING", "PARTIAL_REPAYMENT", "REPAYMENT"]);
  expect(loan!.events.slice(3)).toEqual(["loan.overdue", "loan.defaulted", "loan.repaid"]);
});

test("failed and stray payments move no loan; a kept payment attributed by the Owner counts as a partial payment", async () => {
  const m = await runScenario([
    new CreateLoan("TON_TESTNET", 3, 2_000),
    new CreateLoan("POLYGON_AMOY", 3, 2_000),
    new StrayPayment(0, "noBalance", 100, false),
    new StrayPayment(1, "noAllowance", 100, false),
    new StrayPayment(0, "otherToken", 3_000, false),
    new StrayPayment(1, "elsewhere", 100, true),
    new StrayPayment(0, "unnamed", 2_000, false),
    new Attribute(0, 0, "awaiting"),
    new Poll(true),
    new Pay(0, { kind: "exact" }, false, true),
  ]);
  expect(m.loans.map((l) => [l.status, l.paid, l.events.slice(3)])).toEqual([
    ["REPAID", 20_400_000n, ["loan.repayment_failed", "loan.repaid"]],
    ["ACTIVE", 0n, ["loan.repayment_failed"]],
  ]);
  expect(m.loans[0]!.settlements.map((s) => [s.kind, s.status, s.amount])).toEqual([
    ["FUNDING", "CONFIRMED", 20_000_000n],
    ["REPAYMENT", "FAILED", 21_000_001n],
    ["PARTIAL_REPAYMENT", "CONFIRMED", 20_000_000n],
    ["REPAYMENT", "CONFIRMED", 400_000n],
  ]);
  expect(m.unmatched.map((u) => u.attributedLoanId)).toEqual([m.loans[0]!.id]);
});

// A payment is judged at the time of its transfer, on the tenant's clock (issue 15): three ways the
// service used to judge it later, each a path of the commands above.

test("paid a minute before dueAt, swept a minute after, polled last: REPAID at the transfer's time, no late fee, loan.overdue kept", async () => {
  const m = await runScenario([
    new CreateLoan("TON_TESTNET", 3, 1_000),
    new AdvanceSystemClock({ kind: "to", loan: 0, anchor: "due", deltaS: -60 }),
    new Pay(0, { kind: "exact" }, true, true),
    new AdvanceSystemClock({ kind: "by", seconds: 120 }),
    new Sweep(),
    new Poll(false),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, lateFeeDays: loan!.lateFeeDays, paid: loan!.paid, repaidAt: loan!.repaidAt, overdue: loan!.overdue }).toEqual({
    status: "REPAID",
    lateFeeDays: 0,
    paid: 10_200_000n,
    repaidAt: loan!.dueAt - 60_000,
    overdue: true,
  });
  expect(loan!.events.slice(3)).toEqual(["loan.overdue", "loan.repaid"]);
});

test("paid on the ledger, the sandbox clock advanced 5 days before the poll: REPAID at the transfer's time, no late fee", async () => {
  const m = await runScenario([
    new CreateLoan("POLYGON_AMOY", 3, 1_000),
    new AdvanceSystemClock({ kind: "by", seconds: 3600 }),
    new Pay(0, { kind: "exact" }, true, true),
    new AdvanceSandboxClock({ kind: "by", seconds: 5 * DAY_S }),
    new Poll(false),
  ]);
  const [loan] = m.loans;
  expect({ status: loan!.status, lateFeeDays: loan!.lateFeeDays, paid: loan!.paid, repaidAt: loan!.repaidAt }).toEqual({
    status: "REPAID",
    lateFeeDays: 0,
    paid: 10_200_000n,
    repaidAt: loan!.fundedAt + 3_600_000,
  });
});

test("advance 10 days, 10.20 kept for a REPAID loan, attributed to a loan funded an hour later: REPAID from its funding, nothing owed a week on", async () => {
  const m = await runScenario([
    new AdvanceSandboxClock({ kind: "by", seconds: 10 * DAY_S }),
    new CreateLoan("TON_TESTNET", 3, 1_000),
    new Pay(0, { kind: "exact" }, false, true),
    // Due 0 now: the command pays 5.00 plus the extra, 10.20 in all, and the service keeps it.
    new Pay(0, { kind: "excess", extraUnits: 5_200_000 }, false, true),
    new AdvanceSystemClock({ kind: "by", seconds: 3600 }),
    new CreateLoan("TON_TESTNET", 3, 1_000),
    new Attribute(0, 1, "awaiting"),
    new AdvanceSandboxClock({ kind: "by", seconds: 7 * DAY_S }),
  ]);
  const [, second] = m.loans;
  expect(m.unmatched.map((u) => [u.amount, u.attributedLoanId])).toEqual([[10_200_000n, second!.id]]);
  expect({ status: second!.status, lateFeeDays: second!.lateFeeDays, paid: second!.paid, surplus: second!.surplus, repaidAt: second!.repaidAt }).toEqual({
    status: "REPAID",
    lateFeeDays: 0,
    paid: 10_200_000n,
    surplus: 0n,
    repaidAt: second!.fundedAt,
  });
});

test("an older kept payment attributed after a later partial counts from the partial: the late fee owed then stands", async () => {
  const m = await runScenario([
    new CreateLoan("TON_TESTNET", 3, 1_000),
    // 5.20 naming no loan, before due: kept.
    new StrayPayment(0, "unnamed", 520, false),
    new AdvanceSandboxClock({ kind: "to", loan: 0, anchor: "due", deltaS: 3600 }),
    // Half of the 11.20 due on the first late day.
    new Pay(0, { kind: "partial", permille: 500 }, false, true),
    new Attribute(0, 0, "awaiting"),
  ]);
  const [loan] = m.loans;
  // Judged at its own time, 5.20 would have covered the 4.60 left of 10.20 and waived the late fee.
  expect({ status: loan!.status, paid: loan!.paid, due: dueNow(loan!, tenantNow(m)) }).toEqual({ status: "ACTIVE", paid: 10_800_000n, due: 400_000n });
});

// Model helpers the commands above do not reach otherwise stay honest too.
test("the model's late-fee days: a started day counts, grace caps them, grace 0 charges none", () => {
  const loan = { dueAt: 0, gracePeriodDays: 3 };
  expect([0, 1, DAY_MS, DAY_MS + 1, 10 * DAY_MS].map((at) => lateDaysAt(loan, at))).toEqual([0, 1, 1, 2, 3]);
  expect(lateDaysAt({ dueAt: 0, gracePeriodDays: 0 }, 5 * DAY_MS)).toBe(0);
});
