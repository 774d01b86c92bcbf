import { expect, test } from "bun:test";
import { formatDate, formatFee, normalizeAmount, toCents } from "./format.ts";

test("an amount the borrower types becomes the API's decimal string, digits kept, never a float", () => {
  expect(normalizeAmount("100")).toBe("100.00");
  expect(normalizeAmount(" 25.5 ")).toBe("25.50");
  expect(normalizeAmount("25,5")).toBe("25.50");
  expect(normalizeAmount("0010.01")).toBe("10.01");
  expect(normalizeAmount("999999.99")).toBe("999999.99");
  expect(normalizeAmount("0.10")).toBe("0.10");
  expect(normalizeAmount("1.")).toBe("1.00");
  for (const bad of ["", "0", "0.00", "-5", "1.005", "1e3", "abc", "12.3.4", "１２", "Infinity", "0x10"]) expect(normalizeAmount(bad)).toBeNull();
});

test("fees as the terms state them; dates with their time zone", () => {
  expect(formatFee({ type: "PERCENTAGE", value: "2.00" }, "USDC")).toBe("2.00%");
  expect(formatFee({ type: "FIXED", value: "1.50" }, "USDT")).toBe("1.50 USDT");
  // dateStyle cannot be combined with timeZoneName; this must not throw (it did in Chromium).
  expect(formatDate("2026-11-28T22:08:39.000Z")).toMatch(/2026/);
});

test("amounts compare in cents", () => {
  expect(toCents("1000.00")).toBe(100000n);
  expect(toCents("0.000000")).toBe(0n);
  expect(toCents("10")).toBe(1000n);
  expect(toCents("450.5")).toBe(45050n);
  expect(toCents("9.999999")).toBe(999n);
});
