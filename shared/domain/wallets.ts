/**
 * Live wallets (DECISIONS.md "Live wallets"): which chains take them, the
 * native coin's precision per chain, and the decimal strings the API shows
 * and takes for native amounts (a GAS wallet's threshold). Pure.
 */
import type { Chain } from "./rails.ts";
import { WALLET_ROLES } from "./vocabularies.ts";

export { WALLET_ROLES };
export type WalletRole = (typeof WALLET_ROLES)[number];

/** Wallets hold real funds, so only live chains take them; sandbox chains are simulated per tenant. */
export const LIVE_WALLET_CHAINS = ["POLYGON", "BASE", "TON"] as const satisfies readonly Chain[];
export type LiveWalletChain = (typeof LIVE_WALLET_CHAINS)[number];

export const isLiveWalletChain = (chain: string): chain is LiveWalletChain => (LIVE_WALLET_CHAINS as readonly string[]).includes(chain);

/** Decimals of the chain's native coin: POL and ETH have 18 (wei), TON 9 (nanoton). */
export const nativeDecimals = (chain: Chain): number => (chain === "TON" || chain === "TON_TESTNET" ? 9 : chain === "SOLANA_DEVNET" ? 9 : 18);

/** The native coin's symbol, for sentences ("0.5 POL"). */
export const nativeSymbol = (chain: Chain): string =>
  chain === "TON" || chain === "TON_TESTNET" ? "TON" : chain === "SOLANA_DEVNET" ? "SOL" : chain.startsWith("POLYGON") ? "POL" : "ETH";

/**
 * Base units as a decimal string with no trailing zeros ("0.5", "12", "0"),
 * or at least `minFraction` fraction digits (stablecoin balances show 2, as
 * every amount: "1000.00", "0.10", "1.234567").
 *
 * @example formatBaseUnits(500_000_000_000_000_000n, 18) // "0.5"
 * @example formatBaseUnits(1_000_000_000n, 6, 2) // "1000.00"
 */
export function formatBaseUnits(units: bigint, decimals: number, minFraction = 0): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const trimmed = decimals > 0 ? (abs % scale).toString().padStart(decimals, "0").replace(/0+$/, "") : "";
  const frac = trimmed.padEnd(Math.min(minFraction, decimals), "0");
  return `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d+))?$/;

/**
 * Parses a non-negative decimal string into base units of `decimals`; a
 * reason (a fragment after the field's name) for anything else: signs,
 * exponents, spaces, more fraction digits than the coin has.
 *
 * @example parseBaseUnits("0.5", 18) // { ok: true, units: 500000000000000000n }
 */
export function parseBaseUnits(input: string, decimals: number): { ok: true; units: bigint } | { ok: false; reason: string } {
  const m = DECIMAL.exec(input);
  if (!m) return { ok: false, reason: 'must be a decimal string such as "0.5" (digits, at most one point, no sign or exponent)' };
  const [, whole, frac = ""] = m;
  if (frac.length > decimals) return { ok: false, reason: `has more than ${decimals} decimals, the native coin's precision` };
  return { ok: true, units: BigInt(whole!) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, "0") || "0") };
}
