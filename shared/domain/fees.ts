/** Fee rules (SPEC.md "Merchant configuration", DECISIONS.md "Fees"). */
import { FEE_TYPES } from "./vocabularies.ts";

export { FEE_TYPES };
export type FeeType = (typeof FEE_TYPES)[number];

/**
 * A fee as stored: FIXED `value` in base units; PERCENTAGE `value` is the
 * percent scaled by 10^6 (so "2.5" percent is 2_500_000n).
 */
export type Fee = { type: FeeType; value: bigint };
