import { z } from "@hono/zod-openapi";
import { FEE_TYPES } from "../../../../shared/domain/fees.ts";
import type { MerchantConfigTerms } from "../../../../shared/domain/merchant-config.ts";
import { parseAmount } from "../../../../shared/domain/money.ts";
import { NetworkSchema, StablecoinSchema } from "../../../../shared/schemas/merchant-config.ts";
import { AMOUNT_PATTERN, AmountSchema, toUnits } from "../../../../shared/schemas/money.ts";

/**
 * An amount that also fits the domain's parser (at most 15 integer digits),
 * so nothing that passed the schema can fail to parse. The range rules (the
 * 1000.00 cap, min ≤ max, percentages ≤ 100) are the domain's.
 */
// Only an amount of the right shape can be too large: a negative or over-precise one gets AmountSchema's message alone.
const BoundedAmountSchema = AmountSchema.refine((s) => !AMOUNT_PATTERN.test(s) || parseAmount(s, 2) !== null, "is too large");

const FeeInputSchema = z
  .object({
    type: z.enum(FEE_TYPES),
    value: BoundedAmountSchema.openapi({
      description:
        "Stablecoin units for FIXED (at most 1000.00), percent for PERCENTAGE (at most 100). At most 2 decimals. A percentage is of the principal, rounded half up to the cent: the processing fee once per loan, the late fee once per day's amount (2% of 333.33 is 6.67).",
      example: "2.00",
    }),
  })
  .openapi("FeeInput");

/**
 * The body of POST and PUT /v1/merchant-configs: every field required (PUT
 * replaces the terms as a whole). Shapes are checked here; the cross-field
 * rules (rail pairs, tenures, ticket cap, grace, fee bounds) by
 * `checkMerchantConfigTerms` once the shapes are valid.
 */
export const MerchantConfigBodySchema = z
  .object({
    network: NetworkSchema,
    stablecoin: StablecoinSchema.openapi({ description: "Must pair with `network`: TON/USDT, POLYGON/USDC, BASE/USDC." }),
    tenures: z
      .array(z.number().int())
      .max(3, "at most 3 tenures, a subset of 3, 7, 15")
      .openapi({ description: "A non-empty subset of 3, 7, 15 (days), without repeats.", example: [3, 7, 15] }),
    minTicket: BoundedAmountSchema.openapi({ description: "Smallest loan, greater than 0 and at most `maxTicket`.", example: "10.00" }),
    maxTicket: BoundedAmountSchema.openapi({ description: "Largest loan, at most the product cap of 1000.00.", example: "1000.00" }),
    gracePeriodDays: z.number().int().openapi({ description: "Days after `dueAt` before auto-default: 0 to 30.", example: 3 }),
    processingFee: FeeInputSchema,
    lateFee: FeeInputSchema,
  })
  .openapi("MerchantConfigRequest");

export type MerchantConfigBody = z.infer<typeof MerchantConfigBodySchema>;

/** The domain's terms for a body the schema accepted. */
export const termsFromBody = (b: MerchantConfigBody): MerchantConfigTerms => ({
  network: b.network,
  stablecoin: b.stablecoin,
  tenures: b.tenures,
  minTicket: toUnits(b.minTicket),
  maxTicket: toUnits(b.maxTicket),
  gracePeriodDays: b.gracePeriodDays,
  processingFee: { type: b.processingFee.type, value: toUnits(b.processingFee.value) },
  lateFee: { type: b.lateFee.type, value: toUnits(b.lateFee.value) },
});
