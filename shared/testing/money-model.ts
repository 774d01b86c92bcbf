/**
 * A plain model of a sandbox tenant's money, for the model-based test in
 * shared/settlement/money-model.test.ts: loans, their payments, late fees,
 * overdue and default, the unmatched payments, the liquidity pools and every
 * balance on the simulated ledgers, in bigint base units (10^-6).
 *
 * It is written from SPEC.md and DECISIONS.md, not from the production code:
 * fees, late-fee days, what a payment settles, what the sweep does. It reads
 * nothing from the service but the ids, hashes and addresses it hands out
 * and the balances it starts from.
 */

export const DAY_MS = 86_400_000;
export const UNITS = 1_000_000n;

export type Rail = "POLYGON_AMOY" | "TON_TESTNET";
export type Stablecoin = "USDC" | "USDT";
export const STABLECOIN_OF: Record<Rail, Stablecoin> = { POLYGON_AMOY: "USDC", TON_TESTNET: "USDT" };

/** A fee as the merchant configuration takes it: FIXED in stablecoin units, PERCENTAGE in percent (both 2-decimal strings). */
export type FeeTerms = { type: "FIXED" | "PERCENTAGE"; value: string };
export type Terms = { gracePeriodDays: number; processingFee: FeeTerms; lateFee: FeeTerms };

/** A decimal string ("12.5", "0.000001") as base units; throws on anything else. */
export function units(s: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(s);
  if (!m) throw new Error(`not an amount: ${JSON.stringify(s)}`);
  return BigInt(m[1]!) * UNITS + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** Base units as a decimal string with `digits` decimals (6: what the chain helpers take; 2: whole cents); throws if inexact. */
export function decimal(u: bigint, digits = 6): string {
  const fraction = (u % UNITS).toString().padStart(6, "0");
  if (/[^0]/.test(fraction.slice(digits))) throw new Error(`${u} units is not exact at ${digits} decimals`);
  return `${u / UNITS}.${fraction.slice(0, digits)}`;
}

/**
 * DECISIONS.md "Fees": FIXED is the amount itself; PERCENTAGE is that percent
 * of the principal, rounded half up to the cent (totals are charged in cents).
 * Computed as an exact fraction: cents = principal × percent / 10^4, then
 * ⌊cents + ½⌋.
 */
export function feeUnits(principal: bigint, fee: FeeTerms): bigint {
  const value = units(fee.value);
  if (fee.type === "FIXED") return value;
  // principal (10^-6) × value (percent × 10^6) / 100 / 10^6 = fee in 10^-6; in cents: / 10^4 more.
  const numerator = principal * value;
  const denominator = 100n * UNITS * 10_000n;
  const cents = (2n * numerator + denominator) / (2n * denominator);
  return cents * 10_000n;
}

export type LoanStatus = "ACTIVE" | "REPAID" | "DEFAULTED";
export type SettlementKind = "FUNDING" | "REPAYMENT" | "PARTIAL_REPAYMENT" | "SURPLUS";
/** A settlement row; `paidAt`: when its transfer was made, on the tenant's clock (ms). */
export type ModelSettlement = { kind: SettlementKind; status: "CONFIRMED" | "FAILED"; amount: bigint; txHash: string; paidAt: number };

export type ModelLoan = {
  id: string;
  chain: Rail;
  borrower: string;
  principal: bigint;
  processingFee: bigint;
  dailyLateFee: bigint;
  tenureDays: number;
  gracePeriodDays: number;
  fundedAt: number;
  dueAt: number;
  status: LoanStatus;
  /** `loan.overdue` has fired. */
  overdue: boolean;
  /** Late-fee days the service has charged or recorded so far. */
  lateFeeDays: number;
  paid: bigint;
  surplus: bigint;
  repaidAt: number | null;
  defaultedAt: number | null;
  settlements: ModelSettlement[];
  /** Event types in the order they were committed. */
  events: string[];
};

/** A payment the service could not apply, kept for the tenant (DECISIONS.md: no received payment is ever dropped). */
export type ModelUnmatched = {
  txHash: string;
  chain: Rail;
  from: string;
  amount: bigint;
  claimedLoanId: string | null;
  attributedLoanId: string | null;
  /** When the payment was made: its block's time, on the tenant's clock (ms). */
  paidAt: number;
};

// --- when a payment counts as made ---------------------------------------------------
//
// DECISIONS.md "Fees" and "Repayment": what a payment settles is the total due at the time
// of its transfer, on the loan's clock. Sandbox loans run on the tenant's sandbox clock
// (system time + the offset POST /v1/sandbox/clock/advance moves), and a tenant's sandbox
// ledger stamps its blocks with that clock as it stood at the transfer: so a payment's time
// is the tenant's time when it was made, however far the clock moved before the listener
// polled or an Owner attributed it, and whatever the sweep recorded meanwhile.

/**
 * When a payment made at `at` counts (`countsFrom` in apply-repayment.ts states the same
 * rule for the service): at `at`, but never before the loan was funded nor before a payment
 * already credited to it. The listener reads a ledger in block order, so for it this is `at`;
 * an attribution can bring an older kept payment after newer ones: until the newest arrived
 * the loan was not paid off, so the late fees owed by then stand.
 */
export function countsFrom(loan: ModelLoan, at: number): number {
  const credited = loan.settlements.filter((s) => s.status === "CONFIRMED" && (s.kind === "REPAYMENT" || s.kind === "PARTIAL_REPAYMENT")).map((s) => s.paidAt);
  return Math.max(at, loan.fundedAt, ...credited);
}

/** Started days past `dueAt` at `at`, stopped when grace ends (DECISIONS.md: a late fee per started day until repaid or defaulted). */
export function lateDaysAt(loan: Pick<ModelLoan, "dueAt" | "gracePeriodDays">, at: number): number {
  if (at <= loan.dueAt) return 0;
  const started = Math.ceil((at - loan.dueAt) / DAY_MS);
  return Math.min(started, loan.gracePeriodDays);
}

/** The total the loan costs with `days` late-fee days: principal + processing fee + accrued late fees. */
export const totalWith = (loan: ModelLoan, days: number): bigint => loan.principal + loan.processingFee + loan.dailyLateFee * BigInt(days);

/** Late-fee days as the loan shows them at `now`: frozen at repayment and at default, else accruing. */
export function shownLateDays(loan: ModelLoan, now: number): number {
  if (loan.status !== "ACTIVE") return loan.lateFeeDays;
  return Math.max(loan.lateFeeDays, lateDaysAt(loan, now));
}

/** What remains due at `now` (nothing once REPAID). */
export function dueNow(loan: ModelLoan, now: number): bigint {
  if (loan.status === "REPAID") return 0n;
  const total = totalWith(loan, shownLateDays(loan, now));
  return loan.paid >= total ? 0n : total - loan.paid;
}

/** The loan's fields as GET /v1/loans shows them at `now`, amounts in units and times in ms. */
export function expectedView(loan: ModelLoan, now: number) {
  const days = shownLateDays(loan, now);
  return {
    status: loan.status,
    principalAmount: loan.principal,
    processingFee: loan.processingFee,
    dailyLateFee: loan.dailyLateFee,
    lateFeeDays: days,
    lateFee: loan.dailyLateFee * BigInt(days),
    totalDue: totalWith(loan, days),
    amountPaid: loan.paid,
    amountDue: dueNow(loan, now),
    surplus: loan.surplus,
    overdue: loan.overdue,
    tenureDays: loan.tenureDays,
    gracePeriodDays: loan.gracePeriodDays,
    fundedAt: loan.fundedAt,
    dueAt: loan.dueAt,
    repaidAt: loan.repaidAt,
    defaultedAt: loan.defaultedAt,
  };
}

/**
 * The overdue/default sweep at `now` (SPEC.md "ACTIVE → DEFAULTED"): past
 * `dueAt` an ACTIVE loan fires `loan.overdue` once and records its late-fee
 * days; past `dueAt` + grace it is DEFAULTED at that moment with
 * `loan.defaulted` once, its late fees stopped at the grace period.
 */
export function sweep(loans: ModelLoan[], now: number): void {
  for (const loan of loans) {
    if (loan.status !== "ACTIVE" || now <= loan.dueAt) continue;
    if (now > loan.dueAt + loan.gracePeriodDays * DAY_MS) {
      if (!loan.overdue) loan.events.push("loan.overdue");
      loan.events.push("loan.defaulted");
      loan.overdue = true;
      loan.status = "DEFAULTED";
      loan.defaultedAt = loan.dueAt + loan.gracePeriodDays * DAY_MS;
      loan.lateFeeDays = loan.gracePeriodDays;
      continue;
    }
    if (!loan.overdue) {
      loan.overdue = true;
      loan.events.push("loan.overdue");
    }
    loan.lateFeeDays = Math.max(loan.lateFeeDays, lateDaysAt(loan, now));
  }
}

export type PaymentOutcome = { kind: "applied"; applied: bigint; surplus: bigint; repaid: boolean } | { kind: "notAwaiting" };

/**
 * A confirmed payment of `amount` to `loan`, made at `at` (DECISIONS.md
 * "Repayment", "Statuses after the end"): on an ACTIVE or DEFAULTED loan, the
 * total due when it counts (`countsFrom`: late-fee days by the clock then,
 * not what a sweep recorded since) repays it (REPAID at that time with its
 * late fee, `loan.repaid`; after DEFAULTED a recovery), less is a partial
 * payment with the rest still due, more repays it and keeps the rest as
 * surplus. What a sweep did before the payment was seen stays in the loan's
 * history: `loan.overdue`, `loan.defaulted`, the overdue flag, `defaultedAt`;
 * and what a sweep at the payment's time would have done is done first.
 * Any other loan does not take it.
 */
export function applyPayment(loan: ModelLoan, amount: bigint, at: number, txHash: string): PaymentOutcome {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") return { kind: "notAwaiting" };
  const when = countsFrom(loan, at);
  // Unpaid until then: what a sweep at that moment records (overdue; DEFAULTED past the grace period) comes first,
  // whether or not a sweep ran in between.
  sweep([loan], when);
  const days = lateDaysAt(loan, when);
  const remaining = totalWith(loan, days) - loan.paid;
  // Every credited payment counts by then, and each left less than was due at its own time.
  if (remaining <= 0n) throw new Error(`model: ${loan.id} owes nothing at ${when} yet is ${loan.status}`);
  if (amount < remaining) {
    loan.paid += amount;
    loan.settlements.push({ kind: "PARTIAL_REPAYMENT", status: "CONFIRMED", amount, txHash, paidAt: at });
    return { kind: "applied", applied: amount, surplus: 0n, repaid: false };
  }
  const surplus = amount - remaining;
  loan.paid += remaining;
  loan.surplus += surplus;
  loan.status = "REPAID";
  loan.repaidAt = when;
  loan.lateFeeDays = days;
  loan.events.push("loan.repaid");
  loan.settlements.push({ kind: "REPAYMENT", status: "CONFIRMED", amount: remaining, txHash, paidAt: at });
  if (surplus > 0n) loan.settlements.push({ kind: "SURPLUS", status: "CONFIRMED", amount: surplus, txHash, paidAt: at });
  return { kind: "applied", applied: remaining, surplus, repaid: true };
}

/** A repayment transaction that failed on-chain (SPEC.md): `loan.repayment_failed` and a FAILED row; the loan stays as it was. */
export function failPayment(loan: ModelLoan, amount: bigint, txHash: string, at: number): void {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") return;
  loan.events.push("loan.repayment_failed");
  loan.settlements.push({ kind: "REPAYMENT", status: "FAILED", amount, txHash, paidAt: at });
}

// --- the whole tenant: ledgers, pools, kept payments, what the listener has not seen yet ---

export const RAILS: Rail[] = ["POLYGON_AMOY", "TON_TESTNET"];

export type PendingObservation = { kind: "payment"; loanId: string | null; amount: bigint; from: string } | { kind: "failed"; loanId: string; amount: bigint };

/** A transaction on a ledger that the listener has not processed yet; `blockMs`: its block's time (the tenant's clock at its inclusion). */
export type Pending = { txHash: string; blockMs: number; observation: PendingObservation | null };

export type MoneyModel = {
  /** The system clock and the tenant's sandbox offset (ms); the tenant's clock is their sum. */
  sysMs: number;
  offsetMs: number;
  /** The merchant configuration of each rail, as new loans take it. */
  terms: Record<Rail, Terms>;
  loans: ModelLoan[];
  /** The stablecoin of each ledger (its token address), and where its repayments land. */
  tokens: Record<Rail, string>;
  receivers: Record<Rail, string>;
  /** Balances on each ledger, by `${token}|${address}`. */
  balances: Record<Rail, Map<string, bigint>>;
  /** What the faucet minted on each ledger (in the stablecoin). */
  minted: Record<Rail, bigint>;
  /** The receiver's balance before the run (a genesis allocation). */
  initialReceiver: Record<Rail, bigint>;
  /** EVM wallets: next nonce, allowance given to the pool. */
  nonces: Map<string, number>;
  allowances: Map<string, bigint>;
  /** The liquidity pools' `available` (DECISIONS.md: funding draws the principal, a repayment gives back what the loan owed). */
  pools: Record<Stablecoin, bigint>;
  initialPools: Record<Stablecoin, bigint>;
  unmatched: ModelUnmatched[];
  pending: Record<Rail, Pending[]>;
};

export const tenantNow = (m: MoneyModel) => m.sysMs + m.offsetMs;

export const balanceOf = (m: MoneyModel, rail: Rail, address: string, token = m.tokens[rail]) => m.balances[rail].get(`${token}|${address}`) ?? 0n;

export const credit = (m: MoneyModel, rail: Rail, address: string, amount: bigint, token = m.tokens[rail]) =>
  m.balances[rail].set(`${token}|${address}`, balanceOf(m, rail, address, token) + amount);

/** Moves `amount` unless `from` cannot cover it (then nothing moves: a failed transfer, a revert). */
export function move(m: MoneyModel, rail: Rail, from: string, to: string, amount: bigint, token = m.tokens[rail]): boolean {
  if (balanceOf(m, rail, from, token) < amount) return false;
  credit(m, rail, from, -amount, token);
  credit(m, rail, to, amount, token);
  return true;
}

export function nextNonce(m: MoneyModel, address: string): number {
  const n = m.nonces.get(address) ?? 0;
  m.nonces.set(address, n + 1);
  return n;
}

/**
 * The listener's pass over a ledger: each pending transaction in block order.
 * A failed repayment naming a loan of this chain fails it; a payment repays
 * its loan of this chain, or is kept unmatched (no loan, another chain's
 * loan, a loan no longer awaiting repayment). Other transactions mean nothing.
 */
export function processPending(m: MoneyModel, rail: Rail): void {
  const queue = m.pending[rail];
  m.pending[rail] = [];
  for (const p of queue) {
    const obs = p.observation;
    if (!obs) continue;
    const loan = obs.loanId ? m.loans.find((l) => l.id === obs.loanId) : undefined;
    if (obs.kind === "failed") {
      if (loan && loan.chain === rail) failPayment(loan, obs.amount, p.txHash, p.blockMs);
      continue;
    }
    const keep = (claimedLoanId: string | null) =>
      m.unmatched.push({ txHash: p.txHash, chain: rail, from: obs.from, amount: obs.amount, claimedLoanId, attributedLoanId: null, paidAt: p.blockMs });
    if (!loan || loan.chain !== rail) {
      keep(obs.loanId);
      continue;
    }
    const outcome = applyPayment(loan, obs.amount, p.blockMs, p.txHash);
    if (outcome.kind === "notAwaiting") keep(loan.id);
    else m.pools[STABLECOIN_OF[rail]] += outcome.applied;
  }
}

/**
 * A transaction included now on `rail`, its block stamped with the tenant's clock now (the helpers,
 * funding and the world's direct writes name it); `polled`: a sandbox helper wrote it and polls the
 * ledger at once.
 */
export function include(m: MoneyModel, rail: Rail, txHash: string, observation: PendingObservation | null, polled: boolean): void {
  m.pending[rail].push({ txHash, blockMs: tenantNow(m), observation });
  if (polled) processPending(m, rail);
}

/**
 * An Owner's attribution of a kept payment to `loan`: 409 once attributed or
 * for a REPAID loan, 400 for another chain's loan; else applied like a
 * payment the listener matched, made when it was made (`paidAt`).
 */
export function attribute(m: MoneyModel, kept: ModelUnmatched, loan: ModelLoan): 200 | 400 | 409 {
  if (kept.attributedLoanId) return 409;
  if (loan.chain !== kept.chain) return 400;
  if (loan.status === "REPAID") return 409;
  const outcome = applyPayment(loan, kept.amount, kept.paidAt, kept.txHash);
  if (outcome.kind === "applied") m.pools[STABLECOIN_OF[loan.chain]] += outcome.applied;
  kept.attributedLoanId = loan.id;
  return 200;
}
