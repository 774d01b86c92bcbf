import { describe, expect, test } from "bun:test";
import { formatBaseUnits, isLiveWalletChain, nativeDecimals, parseBaseUnits } from "./wallets.ts";

describe("live wallet chains", () => {
  test("only POLYGON, BASE and TON take wallets", () => {
    expect(["POLYGON", "BASE", "TON"].every(isLiveWalletChain)).toBe(true);
    expect(["POLYGON_AMOY", "BASE_SEPOLIA", "TON_TESTNET", "SOLANA_DEVNET", "ETHEREUM", ""].some(isLiveWalletChain)).toBe(false);
  });

  test("native coins: 18 decimals on EVM, 9 on TON", () => {
    expect(nativeDecimals("POLYGON")).toBe(18);
    expect(nativeDecimals("BASE")).toBe(18);
    expect(nativeDecimals("TON")).toBe(9);
  });
});

describe("native amounts", () => {
  test.each([
    [0n, 18, "0"],
    [500_000_000_000_000_000n, 18, "0.5"],
    [1n, 18, "0.000000000000000001"],
    [12n * 10n ** 18n, 18, "12"],
    [1_500_000_000n, 9, "1.5"],
    [2_500_500_000n, 6, "2500.5"],
    [123_456_789_012_345_678_901_234_567n, 18, "123456789.012345678901234567"],
  ])("format(%p, %p) = %p, and parses back", (units, decimals, text) => {
    expect(formatBaseUnits(units, decimals)).toBe(text);
    expect(parseBaseUnits(text, decimals)).toEqual({ ok: true, units });
  });

  test.each([
    [1_000_000_000n, "1000.00"],
    [100_000n, "0.10"],
    [0n, "0.00"],
    [1_234_567n, "1.234567"],
    [2_500_500_000n, "2500.50"],
  ])("a stablecoin balance (6 decimals) shows at least 2: %p → %p, and parses back", (units, text) => {
    expect(formatBaseUnits(units, 6, 2)).toBe(text);
    expect(parseBaseUnits(text, 6)).toEqual({ ok: true, units });
  });

  test.each(["", "-1", "+1", "1e18", " 1", "1 ", "1.", ".5", "0x10", "1,5", "١"])("%p is not an amount", (text) => {
    expect(parseBaseUnits(text, 18).ok).toBe(false);
  });

  test("more fraction digits than the coin has are refused, never rounded", () => {
    expect(parseBaseUnits("0.0000000001", 9)).toEqual({ ok: false, reason: "has more than 9 decimals, the native coin's precision" });
    expect(parseBaseUnits("0.000000001", 9)).toEqual({ ok: true, units: 1n });
  });
});
