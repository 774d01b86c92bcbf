import { z } from "@hono/zod-openapi";
import type { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import type { widgetPrograms } from "../../db/schema/widget-programs.ts";
import type { Fee } from "../domain/fees.ts";
import { FEE_TYPES } from "../domain/fees.ts";
import { formatAmount } from "../domain/money.ts";
import { embedKeyMode } from "../auth/api-keys.ts";
import { TENURES } from "../domain/merchant-config.ts";
import { chainForRail, CHAINS, NETWORKS, STABLECOINS, TENANT_MODES, type TenantMode } from "../domain/rails.ts";
import { iso, TimestampSchema } from "./common.ts";

export const NetworkSchema = z.enum(NETWORKS).openapi({ example: "POLYGON" });
export const StablecoinSchema = z.enum(STABLECOINS).openapi({ example: "USDC" });
export const ChainSchema = z.enum(CHAINS).openapi({ example: "POLYGON_AMOY" });
/** A tenure in days in a request: documented as the enum of every tenure (`TENURES`); whether it is one of the product's is the domain's check. */
export const TenureDaysSchema = z
  .number()
  .int()
  .openapi({ enum: [...TENURES] });

export const FeeSchema = z
  .object({
    type: z.enum(FEE_TYPES),
    value: z
      .string()
      .regex(/^\d+(\.\d{1,2})?$/, "must be a decimal string with at most 2 decimals")
      .openapi({ description: "Stablecoin units for FIXED, percent for PERCENTAGE (at most 100).", example: "2.00" }),
  })
  .openapi("Fee");

export const MerchantConfigSchema = z
  .object({
    id: z.uuid(),
    network: NetworkSchema,
    stablecoin: StablecoinSchema,
    chain: ChainSchema.openapi({ description: "The chain this rail lends on for the tenant's mode (sandbox or live)." }),
    tenures: z.array(z.number().int()),
    minTicket: z.string(),
    maxTicket: z.string(),
    gracePeriodDays: z.number().int(),
    processingFee: FeeSchema,
    lateFee: FeeSchema,
    loanProductId: z.uuid().openapi({ description: "The configuration's active loan product." }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("MerchantConfig");

export const WidgetProgramSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    embedKey: z.string().openapi({ example: "ek_test_3kT9vQ2mX8pL4nR7wY1zB6cD" }),
    mode: z.enum(TENANT_MODES).openapi({ description: "The program's mode, fixed when it was made (`ek_test_…` sandbox, `ek_live_…` live)." }),
    merchantConfigId: z.uuid(),
    network: NetworkSchema,
    stablecoin: StablecoinSchema,
    loanProductId: z.uuid(),
    allowedOrigins: z.array(z.string()),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("WidgetProgram");

const feeView = (fee: Fee) => ({ type: fee.type, value: formatAmount(fee.value, 2) });

/** Fee values are stored at 10^-6 but accepted with at most 2 decimals, so they format exactly. */
export function merchantConfigView(row: typeof merchantConfigs.$inferSelect & { loanProductId: string }, mode: TenantMode) {
  return {
    id: row.id,
    network: row.network,
    stablecoin: row.stablecoin,
    chain: chainForRail(row.network, mode),
    tenures: row.tenures,
    minTicket: formatAmount(row.minTicket),
    maxTicket: formatAmount(row.maxTicket),
    gracePeriodDays: row.gracePeriodDays,
    processingFee: feeView({ type: row.processingFeeType, value: row.processingFeeValue }),
    lateFee: feeView({ type: row.lateFeeType, value: row.lateFeeValue }),
    loanProductId: row.loanProductId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function widgetProgramView(
  row: typeof widgetPrograms.$inferSelect,
  config: { network: (typeof NETWORKS)[number]; stablecoin: (typeof STABLECOINS)[number]; loanProductId: string },
) {
  return {
    id: row.id,
    name: row.name,
    embedKey: row.embedKey,
    mode: embedKeyMode(row.embedKey),
    merchantConfigId: row.merchantConfigId,
    network: config.network,
    stablecoin: config.stablecoin,
    loanProductId: config.loanProductId,
    allowedOrigins: row.allowedOrigins,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
