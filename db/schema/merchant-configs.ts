import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { FEE_TYPES, NETWORKS, STABLECOINS } from "./vocabularies.ts";
import { json, timestamp, units } from "./columns.ts";
import { tenants } from "./tenants.ts";

/** A merchant configuration: exactly one rail, its limits and pricing. */
export const merchantConfigs = sqliteTable(
  "merchant_configs",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
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
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [index("merchant_configs_tenant_idx").on(t.tenantId, t.createdAt)],
);
