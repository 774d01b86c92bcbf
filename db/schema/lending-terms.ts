import { integer, text } from "drizzle-orm/sqlite-core";
import { json, units } from "./columns.ts";
import { FEE_TYPES, NETWORKS, STABLECOINS } from "../../shared/domain/vocabularies.ts";

/**
 * The lending terms a merchant configuration holds and its loan product is
 * synchronized to: rail, tenures, ticket limits, grace and fees. A function,
 * because each table needs its own column builders.
 */
export const lendingTermsColumns = () => ({
  network: text("network", { enum: NETWORKS }).notNull(),
  stablecoin: text("stablecoin", { enum: STABLECOINS }).notNull(),
  tenures: json<number[]>("tenures").notNull(),
  minTicket: units("min_ticket_units").notNull(),
  maxTicket: units("max_ticket_units").notNull(),
  gracePeriodDays: integer("grace_period_days").notNull(),
  processingFeeType: text("processing_fee_type", { enum: FEE_TYPES }).notNull(),
  /** Base units for FIXED; percent × 10^6 for PERCENTAGE. */
  processingFeeValue: units("processing_fee_value").notNull(),
  lateFeeType: text("late_fee_type", { enum: FEE_TYPES }).notNull(),
  lateFeeValue: units("late_fee_value").notNull(),
});
