import type { Fee } from "./fees.ts";
import { TICKET_CAP_UNITS, UNITS_PER_COIN } from "./money.ts";
import { isSupportedRail, RAILS, type Network, type Stablecoin } from "./rails.ts";

/** SPEC.md "Merchant configuration" and "Limits". */
export const TENURES = [3, 7, 15] as const;
export type Tenure = (typeof TENURES)[number];
export const MAX_GRACE_DAYS = 30;
/** A percentage fee above 100% is never a sensible price. */
export const MAX_PERCENTAGE_UNITS = 100n * UNITS_PER_COIN;

export type MerchantConfigTerms = {
  network: Network;
  stablecoin: Stablecoin;
  tenures: number[];
  minTicket: bigint;
  maxTicket: bigint;
  gracePeriodDays: number;
  processingFee: Fee;
  lateFee: Fee;
};

/**
 * The rules no schema can express alone. Returns one message per bad field,
 * each starting with the field's name; empty when the terms are valid.
 */
export function checkMerchantConfigTerms(t: MerchantConfigTerms): string[] {
  const errors: string[] = [];
  if (!isSupportedRail(t.network, t.stablecoin)) {
    errors.push(`stablecoin: ${t.network} lends in ${RAILS[t.network].stablecoin}; supported rails are TON/USDT, POLYGON/USDC, BASE/USDC`);
  }
  if (t.tenures.length === 0) errors.push("tenures: at least one of 3, 7, 15 is required");
  if (new Set(t.tenures).size !== t.tenures.length) errors.push("tenures: must not repeat a tenure");
  for (const d of t.tenures) {
    if (!(TENURES as readonly number[]).includes(d)) errors.push(`tenures: ${d} is not one of 3, 7, 15`);
  }
  if (t.minTicket <= 0n) errors.push("minTicket: must be greater than 0");
  if (t.maxTicket > TICKET_CAP_UNITS) errors.push("maxTicket: must not exceed the product cap of 1000.00");
  if (t.minTicket > t.maxTicket) errors.push("minTicket: must not exceed maxTicket");
  if (!Number.isInteger(t.gracePeriodDays) || t.gracePeriodDays < 0 || t.gracePeriodDays > MAX_GRACE_DAYS) {
    errors.push("gracePeriodDays: must be an integer from 0 to 30");
  }
  for (const [field, fee] of [
    ["processingFee", t.processingFee],
    ["lateFee", t.lateFee],
  ] as const) {
    if (fee.value < 0n) errors.push(`${field}.value: must not be negative`);
    if (fee.type === "PERCENTAGE" && fee.value > MAX_PERCENTAGE_UNITS) errors.push(`${field}.value: a percentage must not exceed 100`);
    if (fee.type === "FIXED" && fee.value > TICKET_CAP_UNITS) errors.push(`${field}.value: a fixed fee must not exceed 1000.00`);
  }
  return errors;
}

/** Tenures in ascending order, the order every view shows. */
export const sortedTenures = (tenures: number[]): number[] => [...tenures].sort((a, b) => a - b);

/**
 * What a new tenant lends with until it changes its configuration: POLYGON/USDC,
 * every tenure, 10.00 to 1000.00, 3 days of grace, a 2% processing fee and a
 * 1.00 late fee per started day.
 */
export const DEFAULT_MERCHANT_CONFIG: MerchantConfigTerms = {
  network: "POLYGON",
  stablecoin: "USDC",
  tenures: [3, 7, 15],
  minTicket: 10n * UNITS_PER_COIN,
  maxTicket: TICKET_CAP_UNITS,
  gracePeriodDays: 3,
  processingFee: { type: "PERCENTAGE", value: 2n * UNITS_PER_COIN },
  lateFee: { type: "FIXED", value: 1n * UNITS_PER_COIN },
};
