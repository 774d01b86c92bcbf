import { describe, expect, test } from "bun:test";
import { checkMerchantConfigTerms, DEFAULT_MERCHANT_CONFIG, type MerchantConfigTerms } from "./merchant-config.ts";
import { parseAmount } from "./money.ts";

const terms = (over: Partial<MerchantConfigTerms>): MerchantConfigTerms => ({ ...DEFAULT_MERCHANT_CONFIG, ...over });
const units = (s: string) => parseAmount(s)!;

describe("checkMerchantConfigTerms", () => {
  test("the default terms are valid", () => {
    expect(checkMerchantConfigTerms(DEFAULT_MERCHANT_CONFIG)).toEqual([]);
  });
  test("every supported rail is accepted, every mixed pair rejected naming stablecoin", () => {
    expect(checkMerchantConfigTerms(terms({ network: "TON", stablecoin: "USDT" }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ network: "BASE", stablecoin: "USDC" }))).toEqual([]);
    for (const [network, stablecoin] of [
      ["TON", "USDC"],
      ["POLYGON", "USDT"],
      ["BASE", "USDT"],
    ] as const) {
      const errors = checkMerchantConfigTerms(terms({ network, stablecoin }));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toStartWith("stablecoin:");
    }
  });
  test("tenures must be a non-empty subset of 3, 7, 15 without repeats", () => {
    expect(checkMerchantConfigTerms(terms({ tenures: [7] }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ tenures: [5] }))).toEqual(["tenures: 5 is not one of 3, 7, 15"]);
    expect(checkMerchantConfigTerms(terms({ tenures: [] }))[0]).toStartWith("tenures:");
    expect(checkMerchantConfigTerms(terms({ tenures: [3, 3] }))[0]).toStartWith("tenures:");
  });
  test("tickets: positive, min ≤ max, max ≤ 1000.00 to the cent", () => {
    expect(checkMerchantConfigTerms(terms({ maxTicket: units("1000.00") }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ maxTicket: units("1000.01") }))).toEqual(["maxTicket: must not exceed the product cap of 1000.00"]);
    expect(checkMerchantConfigTerms(terms({ minTicket: units("50"), maxTicket: units("49.99") }))).toEqual(["minTicket: must not exceed maxTicket"]);
    expect(checkMerchantConfigTerms(terms({ minTicket: 0n }))).toContain("minTicket: must be greater than 0");
  });
  test("grace period 0..30", () => {
    expect(checkMerchantConfigTerms(terms({ gracePeriodDays: 0 }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ gracePeriodDays: 30 }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ gracePeriodDays: 31 }))).toEqual(["gracePeriodDays: must be an integer from 0 to 30"]);
    expect(checkMerchantConfigTerms(terms({ gracePeriodDays: -1 }))).toHaveLength(1);
  });
  test("fees: percentage at most 100, fixed at most the cap", () => {
    expect(checkMerchantConfigTerms(terms({ lateFee: { type: "PERCENTAGE", value: units("100") } }))).toEqual([]);
    expect(checkMerchantConfigTerms(terms({ lateFee: { type: "PERCENTAGE", value: units("100.01") } }))).toEqual([
      "lateFee.value: a percentage must not exceed 100",
    ]);
    expect(checkMerchantConfigTerms(terms({ processingFee: { type: "FIXED", value: units("1000.01") } }))).toEqual([
      "processingFee.value: a fixed fee must not exceed 1000.00",
    ]);
  });
});
