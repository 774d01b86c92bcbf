import type { loanProducts } from "../../db/schema/loan-products.ts";
import type { merchantConfigs } from "../../db/schema/merchant-configs.ts";
import type { MerchantConfigTerms } from "../domain/merchant-config.ts";
import { sortedTenures } from "../domain/merchant-config.ts";

type ConfigRow = typeof merchantConfigs.$inferSelect;
type ProductInsert = typeof loanProducts.$inferInsert;

/** Column values of a configuration (and of its synchronized product) for the given terms. */
export function termsColumns(t: MerchantConfigTerms) {
  return {
    network: t.network,
    stablecoin: t.stablecoin,
    tenures: sortedTenures(t.tenures),
    minTicket: t.minTicket,
    maxTicket: t.maxTicket,
    gracePeriodDays: t.gracePeriodDays,
    processingFeeType: t.processingFee.type,
    processingFeeValue: t.processingFee.value,
    lateFeeType: t.lateFee.type,
    lateFeeValue: t.lateFee.value,
  };
}

export const termsOf = (row: ConfigRow): MerchantConfigTerms => ({
  network: row.network,
  stablecoin: row.stablecoin,
  tenures: row.tenures,
  minTicket: row.minTicket,
  maxTicket: row.maxTicket,
  gracePeriodDays: row.gracePeriodDays,
  processingFee: { type: row.processingFeeType, value: row.processingFeeValue },
  lateFee: { type: row.lateFeeType, value: row.lateFeeValue },
});

/** The active loan product row for a configuration. */
export function productRow(config: { id: string; tenantId: string }, productId: string, t: MerchantConfigTerms, now: Date): ProductInsert {
  return {
    id: productId,
    tenantId: config.tenantId,
    merchantConfigId: config.id,
    version: "v1",
    status: "ACTIVE",
    ...termsColumns(t),
    createdAt: now,
    updatedAt: now,
  };
}
