/**
 * Money is an integer count of 10^-6 stablecoin units (bigint) everywhere in
 * the domain. This module is the only place that parses or formats amounts.
 */
export const UNIT_DECIMALS = 6;
export const UNITS_PER_COIN = 10n ** BigInt(UNIT_DECIMALS);

/** The largest amount the database stores exactly (units columns are INTEGER, read back as JS numbers): 2^53 − 1 units. */
export const MAX_STORABLE_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

/** The product's hard cap per loan: 1,000 USD-pegged units. */
export const TICKET_CAP_UNITS = 1_000n * UNITS_PER_COIN;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Digits before the point parseAmount takes at most: far beyond any amount we handle; keeps Number() exact in SQLite. */
export const MAX_WHOLE_DIGITS = 15;

/**
 * The error of an amount parseAmount refused (or of 0), naming `field`.
 *
 * @example amountError("amount", 6) // "amount: must be a decimal string greater than 0, with at most 15 digits before the point and 6 after it"
 */
export const amountError = (field: string, maxDecimals = 2): string =>
  `${field}: must be a decimal string greater than 0, with at most ${MAX_WHOLE_DIGITS} digits before the point and ${maxDecimals} after it`;

/**
 * Parses a decimal string with at most `maxDecimals` fraction digits into base units.
 * Returns null for anything else (signs, exponents, spaces, too many decimals).
 *
 * @example parseAmount("100.05") // 100050000n
 */
export function parseAmount(input: string, maxDecimals = 2): bigint | null {
  if (maxDecimals > UNIT_DECIMALS) throw new RangeError("maxDecimals exceeds unit precision");
  const m = DECIMAL.exec(input);
  if (!m) return null;
  const [, digits, frac = ""] = m;
  if (frac.length > maxDecimals) return null;
  // Leading zeros say nothing ("0000100.00" is 100.00); what counts is the value's own digits.
  const whole = digits!.replace(/^0+(?=\d)/, "");
  if (whole.length > MAX_WHOLE_DIGITS) return null;
  return BigInt(whole) * UNITS_PER_COIN + BigInt(frac.padEnd(UNIT_DECIMALS, "0"));
}

/**
 * Formats base units with exactly `decimals` fraction digits. Throws when the
 * amount is not representable exactly: rounding is a pricing decision, made
 * explicitly with `roundUnits`, never silently here.
 *
 * @example formatAmount(100050000n) // "100.05"
 */
export function formatAmount(units: bigint, decimals = 2): string {
  if (decimals < 0 || decimals > UNIT_DECIMALS) throw new RangeError("decimals out of range");
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const step = 10n ** BigInt(UNIT_DECIMALS - decimals);
  if (abs % step !== 0n) throw new RangeError(`${units} units is not exact at ${decimals} decimals`);
  const whole = abs / UNITS_PER_COIN;
  const frac = (abs % UNITS_PER_COIN).toString().padStart(UNIT_DECIMALS, "0").slice(0, decimals);
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${frac}` : ""}`;
}

const UNITS_PER_CENT = 10n ** BigInt(UNIT_DECIMALS - 2);

/**
 * An amount as the API shows it (DECISIONS.md: principal, fees and totals
 * with exactly 2 decimals): 2 decimals when it is a whole number of cents,
 * which every principal, fee and total the service computes is; all 6 when
 * it is not, as a payment of sub-cent base units and what it leaves due or
 * over can be (never rounded: what a borrower owes is shown exactly).
 *
 * @example displayAmount(102_000000n) // "102.00"
 * @example displayAmount(101_999999n) // "101.999999"
 */
export const displayAmount = (units: bigint): string => formatAmount(units, units % UNITS_PER_CENT === 0n ? 2 : 6);

/** Rounds base units to `decimals` fraction digits, half up (away from zero for positives). */
export function roundUnits(units: bigint, decimals = 2): bigint {
  const step = 10n ** BigInt(UNIT_DECIMALS - decimals);
  if (step === 1n) return units;
  const rem = units % step;
  const down = units - rem;
  return rem * 2n >= step ? down + step : down;
}
