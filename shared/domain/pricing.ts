/**
 * What a loan costs (DECISIONS.md "Merchant configuration", fees): a processing
 * fee charged once on top of the principal, and a late fee per started day past
 * `dueAt` until the loan is repaid or defaults. All amounts are base units
 * (10^-6); every fee is rounded half up to the cent, because totals are shown
 * and charged with 2 decimals.
 */
import type { Fee } from "./fees.ts";
import { roundUnits, UNITS_PER_COIN } from "./money.ts";

export const DAY_MS = 86_400_000;

/** A PERCENTAGE fee's `value` is the percent × 10^6, so the fraction is value / (100 × 10^6). */
const PERCENT_DENOMINATOR = 100n * UNITS_PER_COIN;

/**
 * The fee on `principal` rounded half up to the cent.
 *
 * Truncating the quotient to whole units before `roundUnits` is exact: the
 * half-cent boundaries (multiples of 5_000 units) are integers, so no value
 * below one can truncate onto or past it.
 */
function feeUnits(principal: bigint, fee: Fee): bigint {
  if (fee.type === "FIXED") return roundUnits(fee.value); // already whole cents for anything the config accepts
  return roundUnits((principal * fee.value) / PERCENT_DENOMINATOR);
}

/**
 * The one-time processing fee, added to what the borrower owes.
 *
 * @example processingFeeUnits(100_000_000n, { type: "PERCENTAGE", value: 2_000_000n }) // 2_000_000n (2.00)
 * @example processingFeeUnits(33_330_000n, { type: "PERCENTAGE", value: 1_500_000n }) // 500_000n (0.49995 → 0.50)
 */
export const processingFeeUnits = (principal: bigint, fee: Fee): bigint => feeUnits(principal, fee);

/**
 * The late fee charged for each started day past `dueAt`.
 *
 * @example dailyLateFeeUnits(100_000_000n, { type: "FIXED", value: 1_000_000n }) // 1_000_000n (1.00)
 */
export const dailyLateFeeUnits = (principal: bigint, fee: Fee): bigint => feeUnits(principal, fee);

/**
 * `dueAt` of a loan funded at `fundedAt` (DECISIONS.md "Loans": funded time + tenure).
 *
 * @example dueAtFor(new Date("2026-11-21T10:00:00.000Z"), 7) // 2026-11-28T10:00:00.000Z
 */
export const dueAtFor = (fundedAt: Date, tenureDays: number): Date => new Date(fundedAt.getTime() + tenureDays * DAY_MS);

/**
 * A time as a chain tells it: whole seconds (a block's timestamp has no
 * milliseconds). Lateness is judged at it everywhere: a payment is judged at
 * its block's time, so the view, the quote of what is owed and the sweep
 * judge `now` to the second too. Before, `dueAt` (funded time + tenure, with
 * milliseconds) was passed half a second before a payment's block, which the
 * chain dated before it: the instructions asked a day's late fee the payment
 * then did not owe (a surplus).
 */
export const wholeSecondMs = (ms: number): number => Math.floor(ms / 1000) * 1000;

/**
 * Started days past `dueAt` that carry a late fee, at `now` (to the second,
 * wholeSecondMs). Accrual stops when the grace period ends, because that is
 * when the loan defaults; so the count never exceeds `gracePeriodDays` (and a
 * grace of 0 charges none).
 *
 * @example lateFeeDays(dueAt, new Date(dueAt.getTime() + 1_000), 3) // 1 (a started day)
 * @example lateFeeDays(dueAt, new Date(dueAt.getTime() + 10 * DAY_MS), 3) // 3
 */
export function lateFeeDays(dueAt: Date | null, now: Date, gracePeriodDays: number): number {
  if (dueAt === null) return 0;
  const late = wholeSecondMs(now.getTime()) - dueAt.getTime();
  const accruing = Math.min(Math.max(late, 0), Math.max(gracePeriodDays, 0) * DAY_MS);
  return Math.ceil(accruing / DAY_MS);
}

/** Past `dueAt` (at `now` to the second) and so due a `loan.overdue`; false before funding (no `dueAt`). */
export const isOverdue = (dueAt: Date | null, now: Date): boolean => dueAt !== null && wholeSecondMs(now.getTime()) > dueAt.getTime();

/** Past `dueAt` plus the grace period (at `now` to the second): the moment a still-unpaid loan defaults. */
export const isPastGrace = (dueAt: Date | null, gracePeriodDays: number, now: Date): boolean =>
  dueAt !== null && wholeSecondMs(now.getTime()) > dueAt.getTime() + gracePeriodDays * DAY_MS;

/**
 * Principal + processing fee + accrued late fees.
 *
 * @example totalDueUnits({ principal: 100_000_000n, processingFee: 2_000_000n, dailyLateFee: 1_000_000n, lateDays: 2 }) // 104_000_000n
 */
export function totalDueUnits(parts: { principal: bigint; processingFee: bigint; dailyLateFee: bigint; lateDays: number }): bigint {
  return parts.principal + parts.processingFee + parts.dailyLateFee * BigInt(parts.lateDays);
}

export type LoanQuote = {
  principal: bigint;
  processingFee: bigint;
  dailyLateFee: bigint;
  /** What repays the loan on or before `dueAt`: no late fees yet. */
  totalDueAtDueDate: bigint;
};

/**
 * The price of a loan before it is funded.
 *
 * @example quoteLoan({ principal: 100_000_000n, processingFee: { type: "PERCENTAGE", value: 2_000_000n }, lateFee: { type: "FIXED", value: 1_000_000n } })
 * // { principal: 100_000_000n, processingFee: 2_000_000n, dailyLateFee: 1_000_000n, totalDueAtDueDate: 102_000_000n }
 */
export function quoteLoan(input: { principal: bigint; processingFee: Fee; lateFee: Fee }): LoanQuote {
  const processingFee = processingFeeUnits(input.principal, input.processingFee);
  const dailyLateFee = dailyLateFeeUnits(input.principal, input.lateFee);
  return {
    principal: input.principal,
    processingFee,
    dailyLateFee,
    totalDueAtDueDate: totalDueUnits({ principal: input.principal, processingFee, dailyLateFee, lateDays: 0 }),
  };
}
