import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { FEE_TYPES, LOAN_PRODUCT_STATUSES, NETWORKS, STABLECOINS } from "./vocabularies.ts";
import { json, timestamp, units } from "./columns.ts";
import { merchantConfigs } from "./merchant-configs.ts";
import { tenants } from "./tenants.ts";

/**
 * The loan product loans are drawn under. Each merchant configuration has
 * exactly one active product, created on the first save and synchronized
 * (rail, tenures, limits, pricing) on every later save.
 */
export const loanProducts = sqliteTable(
  "loan_products",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    merchantConfigId: text("merchant_config_id")
      .notNull()
      .unique()
      .references(() => merchantConfigs.id),
    /** The product version of SPEC.md "Versioning". */
    version: text("version").notNull().default("v1"),
    status: text("status", { enum: LOAN_PRODUCT_STATUSES }).notNull(),
    network: text("network", { enum: NETWORKS }).notNull(),
    stablecoin: text("stablecoin", { enum: STABLECOINS }).notNull(),
    tenures: json<number[]>("tenures").notNull(),
    minTicket: units("min_ticket_units").notNull(),
    maxTicket: units("max_ticket_units").notNull(),
    gracePeriodDays: integer("grace_period_days").notNull(),
    processingFeeType: text("processing_fee_type", { enum: FEE_TYPES }).notNull(),
    processingFeeValue: units("processing_fee_value").notNull(),
    lateFeeType: text("late_fee_type", { enum: FEE_TYPES }).notNull(),
    lateFeeValue: units("late_fee_value").notNull(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [index("loan_products_tenant_idx").on(t.tenantId)],
);
