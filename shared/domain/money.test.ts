import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { amountError, displayAmount, formatAmount, MAX_WHOLE_DIGITS, parseAmount, roundUnits, TICKET_CAP_UNITS, UNITS_PER_COIN } from "./money.ts";

describe("parseAmount", () => {
  test("exact base units", () => {
    expect(parseAmount("100")).toBe(100_000_000n);
    expect(parseAmount("100.05")).toBe(100_050_000n);
    expect(parseAmount("0.01")).toBe(10_000n);
    expect(parseAmount("1000.00")).toBe(TICKET_CAP_UNITS);
    expect(parseAmount("1.123456", 6)).toBe(1_123_456n);
  });
  test("rejects everything that is not a plain decimal within the precision", () => {
    for (const bad of ["", " 1", "1 ", "-1", "+1", "1e3", "1.", ".5", "1.234", "0x10", "1,00", "NaN", "Infinity", "1.2.3", "١٢"]) {
      expect(parseAmount(bad)).toBeNull();
    }
    expect(parseAmount("1.1234567", 6)).toBeNull();
  });
  test("leading zeros say nothing: only the value's own digits count against the 15-digit bound (an audit saw 20 characters refused, 16 accepted)", () => {
    expect(parseAmount("00000000000000100.00")).toBe(100_000_000n);
    expect(parseAmount("0000000000000000000000100000.00")).toBe(100_000n * UNITS_PER_COIN);
    expect(parseAmount("000")).toBe(0n);
    expect(parseAmount("0.50")).toBe(500_000n);
    expect(parseAmount("999999999999999")).toBe(999_999_999_999_999n * UNITS_PER_COIN);
    expect(parseAmount("1000000000000000")).toBeNull();
    expect(parseAmount("0001000000000000000")).toBeNull();
  });
  test("refuses a precision finer than the unit", () => {
    expect(() => parseAmount("1", 7)).toThrow(RangeError);
  });
});

describe("amountError", () => {
  test("names the field, the digit limit parseAmount applies and the decimals", () => {
    expect(parseAmount("9".repeat(MAX_WHOLE_DIGITS))).not.toBeNull();
    expect(parseAmount("1".repeat(MAX_WHOLE_DIGITS + 1))).toBeNull();
    expect(amountError("principalAmount")).toBe(
      "principalAmount: must be a decimal string greater than 0, with at most 15 digits before the point and 2 after it",
    );
    expect(amountError("amount", 6)).toBe("amount: must be a decimal string greater than 0, with at most 15 digits before the point and 6 after it");
  });
});

describe("formatAmount", () => {
  test("fixed decimals", () => {
    expect(formatAmount(100_000_000n)).toBe("100.00");
    expect(formatAmount(10_000n)).toBe("0.01");
    expect(formatAmount(0n)).toBe("0.00");
    expect(formatAmount(1_500_000n, 6)).toBe("1.500000");
    expect(formatAmount(-10_000n)).toBe("-0.01");
    expect(formatAmount(7n * UNITS_PER_COIN, 0)).toBe("7");
  });
  test("never rounds silently", () => {
    expect(() => formatAmount(1n)).toThrow(RangeError);
    expect(() => formatAmount(10_001n)).toThrow(RangeError);
  });
  test("round-trips every 2-decimal amount (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (cents) => {
        const units = cents * 10_000n;
        const s = formatAmount(units);
        expect(s).toMatch(/^\d+\.\d{2}$/);
        expect(parseAmount(s)).toBe(units);
      }),
    );
  });
  test("round-trips every 6-decimal amount (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), (units) => {
        expect(parseAmount(formatAmount(units, 6), 6)).toBe(units);
      }),
    );
  });
});

describe("roundUnits", () => {
  test("half up to the cent", () => {
    expect(roundUnits(1_004_999n)).toBe(1_000_000n);
    expect(roundUnits(1_005_000n)).toBe(1_010_000n);
    expect(roundUnits(1_000_000n)).toBe(1_000_000n);
    expect(roundUnits(123n, 6)).toBe(123n);
  });
  test("result is on the grid and within half a step (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (u) => {
        const r = roundUnits(u);
        expect(r % 10_000n).toBe(0n);
        const diff = r > u ? r - u : u - r;
        expect(diff <= 5_000n).toBe(true);
      }),
    );
  });
});

test("displayAmount: exactly 2 decimals for whole cents, all 6 otherwise, never rounded", () => {
  expect(displayAmount(102_000000n)).toBe("102.00");
  expect(displayAmount(0n)).toBe("0.00");
  expect(displayAmount(3_550000n)).toBe("3.55");
  expect(displayAmount(101_999999n)).toBe("101.999999");
  expect(displayAmount(1n)).toBe("0.000001");
  expect(displayAmount(40_005000n)).toBe("40.005000");
  expect(displayAmount(-1_500000n)).toBe("-1.50");
});
