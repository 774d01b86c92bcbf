import { z } from "@hono/zod-openapi";
import { parseAmount } from "../domain/money.ts";

/**
 * A decimal-string amount at the API edge: `^\d+(\.\d{1,2})?$`, parsed to
 * base units (bigint). Numbers, signs, exponents, more decimals: rejected.
 */
/** A request amount's shape: digits, then at most 2 decimals. */
export const AMOUNT_PATTERN = /^\d+(\.\d{1,2})?$/;

export const AmountSchema = z
  .string()
  .regex(AMOUNT_PATTERN, 'must be a decimal string with at most 2 decimals, like "100.00"')
  .openapi({ example: "100.00", description: "Decimal string in stablecoin units, at most 2 decimals." });

/** Parses an amount string that AmountSchema already accepted. */
export const toUnits = (s: string): bigint => {
  const u = parseAmount(s, 2);
  if (u === null) throw new RangeError(`not an amount: ${s}`);
  return u;
};
