import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Fee } from "./fees.ts";
import { parseAmount } from "./money.ts";
import { DAY_MS, dailyLateFeeUnits, dueAtFor, isOverdue, isPastGrace, lateFeeDays, processingFeeUnits, quoteLoan, totalDueUnits } from "./pricing.ts";

const units = (s: string): bigint => parseAmount(s, 6)!;
const pct = (percent: string): Fee => ({ type: "PERCENTAGE", value: units(percent) });
const fixed = (amount: string): Fee => ({ type: "FIXED", value: units(amount) });
const CENT = 10_000n;

describe("processingFeeUnits and dailyLateFeeUnits, to the cent", () => {
  const cases: [principal: string, fee: Fee, expected: string][] = [
    ["100.00", pct("2"), "2.00"],
    ["33.33", pct("1.5"), "0.50"], // 0.49995 rounds half up
    ["33.33", pct("1.49"), "0.50"], // 0.496617
    ["33.33", pct("1.47"), "0.49"], // 0.489951
    ["100.00", fixed("1.00"), "1.00"],
    ["1000.00", fixed("0"), "0.00"],
    ["0.01", pct("100"), "0.01"],
    ["0.01", pct("49.99"), "0.00"], // 0.004999
    ["0.01", pct("50"), "0.01"], // 0.005 exactly: half up
    ["1000.00", pct("100"), "1000.00"],
    ["1000.00", pct("0.01"), "0.10"],
    ["999.99", pct("2.5"), "25.00"], // 24.99975
    ["10.10", pct("2.5"), "0.25"], // 0.2525
    ["10.30", pct("2.5"), "0.26"], // 0.2575
    ["0.99", pct("0"), "0.00"],
    ["55.55", fixed("1000.00"), "1000.00"],
  ];
  for (const [principal, fee, expected] of cases) {
    test(`${principal} at ${fee.type} ${fee.value} is ${expected}`, () => {
      expect(processingFeeUnits(units(principal), fee)).toBe(units(expected));
      expect(dailyLateFeeUnits(units(principal), fee)).toBe(units(expected));
    });
  }
});

describe("dueAtFor", () => {
  test("adds whole days in UTC", () => {
    const funded = new Date("2026-11-21T10:00:00.000Z");
    expect(dueAtFor(funded, 3).toISOString()).toBe("2026-11-24T10:00:00.000Z");
    expect(dueAtFor(funded, 7).toISOString()).toBe("2026-11-28T10:00:00.000Z");
    expect(dueAtFor(funded, 15).toISOString()).toBe("2026-12-06T10:00:00.000Z");
  });
  test("ignores daylight saving (UTC milliseconds)", () => {
    expect(dueAtFor(new Date("2026-03-27T12:34:56.789Z"), 3).toISOString()).toBe("2026-03-30T12:34:56.789Z");
  });
});

describe("lateFeeDays, isOverdue, isPastGrace", () => {
  const dueAt = new Date("2026-11-28T10:00:00.000Z");
  const at = (ms: number) => new Date(dueAt.getTime() + ms);

  test("no dueAt (not funded) means nothing is late", () => {
    expect(lateFeeDays(null, at(100 * DAY_MS), 3)).toBe(0);
    expect(isOverdue(null, at(100 * DAY_MS))).toBe(false);
    expect(isPastGrace(null, 3, at(100 * DAY_MS))).toBe(false);
  });

  test("on or before dueAt nothing is late", () => {
    for (const ms of [-DAY_MS, -1, 0]) {
      expect(lateFeeDays(dueAt, at(ms), 3)).toBe(0);
      expect(isOverdue(dueAt, at(ms))).toBe(false);
      expect(isPastGrace(dueAt, 3, at(ms))).toBe(false);
    }
  });

  test("each started day counts, up to the grace period", () => {
    const table: [ms: number, days: number][] = [
      [1_000, 1],
      [DAY_MS - 1, 1],
      [DAY_MS, 1],
      [DAY_MS + 1_000, 2],
      [2 * DAY_MS, 2],
      [2 * DAY_MS + 1_000, 3],
      [3 * DAY_MS, 3],
      [3 * DAY_MS + 1_000, 3], // defaulted: accrual has stopped
      [30 * DAY_MS, 3],
    ];
    for (const [ms, days] of table) expect({ ms, days: lateFeeDays(dueAt, at(ms), 3) }).toEqual({ ms, days });
  });

  test("a grace of 0 defaults at once and charges no late day", () => {
    expect(lateFeeDays(dueAt, at(1_000), 0)).toBe(0);
    expect(lateFeeDays(dueAt, at(5 * DAY_MS), 0)).toBe(0);
    expect(isPastGrace(dueAt, 0, at(0))).toBe(false);
    expect(isPastGrace(dueAt, 0, at(1_000))).toBe(true);
  });

  test("judged to the second, as a chain dates a payment: within the second of dueAt (or of a day's start) nothing more is late; a dueAt with milliseconds is passed at the next whole second", () => {
    expect(isOverdue(dueAt, at(999))).toBe(false);
    expect(lateFeeDays(dueAt, at(999), 3)).toBe(0);
    expect(lateFeeDays(dueAt, at(DAY_MS + 999), 3)).toBe(1);
    expect(isPastGrace(dueAt, 3, at(3 * DAY_MS + 999))).toBe(false);
    // Funded at 10:00:00.400: due at 10:00:00.400 a tenure later. At 10:00:00.900 the instructions ask what a payment
    // the chain dates 10:00:00 owes (nothing late); from 10:00:01 on, a started day.
    const msDue = new Date(dueAt.getTime() + 400);
    expect(lateFeeDays(msDue, at(900), 3)).toBe(0);
    expect(lateFeeDays(msDue, at(0), 3)).toBe(lateFeeDays(msDue, at(900), 3));
    expect(isOverdue(msDue, at(900))).toBe(false);
    expect(lateFeeDays(msDue, at(1_000), 3)).toBe(1);
    expect(isOverdue(msDue, at(1_000))).toBe(true);
  });

  test("overdue strictly after dueAt, past grace strictly after dueAt + grace", () => {
    expect(isOverdue(dueAt, at(1_000))).toBe(true);
    expect(isPastGrace(dueAt, 3, at(3 * DAY_MS))).toBe(false);
    expect(isPastGrace(dueAt, 3, at(3 * DAY_MS + 1_000))).toBe(true);
    expect(isPastGrace(dueAt, 30, at(30 * DAY_MS + 1_000))).toBe(true);
  });

  test("late days are monotonic in time, bounded by grace, and agree with the predicates (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5 * DAY_MS, max: 40 * DAY_MS }),
        fc.integer({ min: -5 * DAY_MS, max: 40 * DAY_MS }),
        fc.integer({ min: 0, max: 30 }),
        (a, b, grace) => {
          const [early, late] = a <= b ? [a, b] : [b, a];
          const d1 = lateFeeDays(dueAt, at(early), grace);
          const d2 = lateFeeDays(dueAt, at(late), grace);
          expect(d1).toBeLessThanOrEqual(d2);
          expect(d2).toBeLessThanOrEqual(grace);
          expect(Number.isInteger(d2) && d2 >= 0).toBe(true);
          // Some late day accrues exactly when overdue with a non-zero grace.
          expect(d2 > 0).toBe(isOverdue(dueAt, at(late)) && grace > 0);
          // Once past grace the count is frozen at grace.
          if (isPastGrace(dueAt, grace, at(late))) expect(d2).toBe(grace);
          // Past grace implies overdue.
          if (isPastGrace(dueAt, grace, at(late))) expect(isOverdue(dueAt, at(late))).toBe(true);
        },
      ),
    );
  });
});

describe("totalDueUnits and quoteLoan", () => {
  test("total is principal + processing fee + daily late fee × late days", () => {
    expect(totalDueUnits({ principal: units("100"), processingFee: units("2"), dailyLateFee: units("1"), lateDays: 0 })).toBe(units("102"));
    expect(totalDueUnits({ principal: units("100"), processingFee: units("2"), dailyLateFee: units("1"), lateDays: 3 })).toBe(units("105"));
  });

  test("the default merchant terms on 100.00", () => {
    expect(quoteLoan({ principal: units("100"), processingFee: pct("2"), lateFee: fixed("1") })).toEqual({
      principal: units("100"),
      processingFee: units("2"),
      dailyLateFee: units("1"),
      totalDueAtDueDate: units("102"),
    });
  });

  test("a percentage late fee is on the principal", () => {
    expect(quoteLoan({ principal: units("33.33"), processingFee: fixed("0.25"), lateFee: pct("1.5") })).toEqual({
      principal: units("33.33"),
      processingFee: units("0.25"),
      dailyLateFee: units("0.50"),
      totalDueAtDueDate: units("33.58"),
    });
  });
});

describe("fee properties over every configurable setting", () => {
  const principalArb = fc.bigInt({ min: 1n, max: 100_000n }).map((cents) => cents * CENT); // 0.01..1000.00
  const feeArb: fc.Arbitrary<Fee> = fc.oneof(
    fc.bigInt({ min: 0n, max: 100_000n }).map((cents): Fee => ({ type: "FIXED", value: cents * CENT })), // 0..1000.00
    // 0..100.00 percent with 2 decimals: hundredths of a percent × 10^4 = percent × 10^6.
    fc.bigInt({ min: 0n, max: 10_000n }).map((hundredths): Fee => ({ type: "PERCENTAGE", value: hundredths * CENT })),
  );

  /** Independent reference: the exact fee in units is principal × value / 10^8; round it half up at the cent. */
  const referenceCents = (principal: bigint, value: bigint): bigint => {
    const denominator = 10n ** 8n * CENT; // exact quotient in cents = principal × value / (10^8 × 10^4)
    return (2n * principal * value + denominator) / (2n * denominator);
  };

  test("every fee is whole cents, non-negative, within half a cent of exact, and half-up rounded", () => {
    fc.assert(
      fc.property(principalArb, feeArb, (principal, fee) => {
        for (const f of [processingFeeUnits(principal, fee), dailyLateFeeUnits(principal, fee)]) {
          expect(f % CENT).toBe(0n);
          expect(f >= 0n).toBe(true);
          if (fee.type === "FIXED") {
            expect(f).toBe(fee.value);
          } else {
            // |f − principal × value / 10^8| ≤ half a cent, compared scaled by 10^8 to stay exact.
            const error = f * 10n ** 8n - principal * fee.value;
            expect(error <= (CENT / 2n) * 10n ** 8n && error >= -(CENT / 2n) * 10n ** 8n).toBe(true);
            // A tie (exactly half a cent) goes up.
            if (error === -(CENT / 2n) * 10n ** 8n) throw new Error("a half-cent tie rounded down");
            expect(f).toBe(referenceCents(principal, fee.value) * CENT);
          }
        }
      }),
      { numRuns: 2_000 },
    );
  });

  test("a percentage fee is monotonic in the principal and never above it at 100% (property)", () => {
    fc.assert(
      fc.property(principalArb, principalArb, feeArb, (a, b, fee) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(processingFeeUnits(lo, fee) <= processingFeeUnits(hi, fee)).toBe(true);
        if (fee.type === "PERCENTAGE") expect(processingFeeUnits(hi, fee) <= hi).toBe(true);
      }),
    );
  });

  test("totals are the exact sum of their parts (property)", () => {
    fc.assert(
      fc.property(principalArb, feeArb, feeArb, fc.integer({ min: 0, max: 30 }), (principal, pf, lf, lateDays) => {
        const q = quoteLoan({ principal, processingFee: pf, lateFee: lf });
        expect(q.principal).toBe(principal);
        expect(q.processingFee).toBe(processingFeeUnits(principal, pf));
        expect(q.dailyLateFee).toBe(dailyLateFeeUnits(principal, lf));
        expect(q.totalDueAtDueDate).toBe(principal + q.processingFee);
        const total = totalDueUnits({ ...q, lateDays });
        expect(total).toBe(principal + q.processingFee + q.dailyLateFee * BigInt(lateDays));
        expect(total % CENT).toBe(0n);
        expect(total >= q.totalDueAtDueDate).toBe(true);
      }),
    );
  });
});
