/** A due date as the borrower reads it, in their locale, with the time zone. */
export const formatDate = (iso: string): string =>
  // dateStyle/timeStyle cannot be combined with timeZoneName (a RangeError), so the fields are spelled out.
  new Date(iso).toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });

/** A fee as the terms state it: "2.50 USDC" or "1.5%". */
export const formatFee = (fee: { type: string; value: string }, stablecoin: string): string =>
  fee.type === "PERCENTAGE" ? `${fee.value}%` : `${fee.value} ${stablecoin}`;

/**
 * An amount the borrower typed, normalized to the API's decimal string
 * ("25" → "25.00"); null when it is not a positive amount with at most two
 * decimals. Never a float: the digits are kept as they are.
 */
export function normalizeAmount(input: string): string | null {
  const m = /^\s*(\d{1,7})(?:[.,](\d{0,2}))?\s*$/.exec(input);
  if (!m) return null;
  const whole = m[1]!.replace(/^0+(?=\d)/, "");
  const cents = (m[2] ?? "").padEnd(2, "0");
  if (/^0+$/.test(whole + cents)) return null;
  return `${whole}.${cents}`;
}

/** A decimal amount string of the API ("12.34", "12.340000") in cents, for comparisons (never a float). */
export function toCents(amount: string): bigint {
  const [whole = "0", frac = ""] = amount.split(".");
  return BigInt(whole) * 100n + BigInt((frac + "00").slice(0, 2));
}
