import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { LOAN_PRODUCT_STATUSES } from "../../shared/domain/vocabularies.ts";
import { timestamp } from "./columns.ts";
import { lendingTermsColumns } from "./lending-terms.ts";
import { merchantConfigs } from "./merchant-configs.ts";

/**
 * The loan product loans are drawn under. Each merchant configuration has
 * exactly one active product, created on the first save and synchronized
 * (rail, tenures, limits, pricing) on every later save.
 */
export const loanProducts = sqliteTable(
  "loan_products",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    merchantConfigId: text("merchant_config_id")
      .notNull()
      .unique()
      .references(() => merchantConfigs.id),
    /** The product version of SPEC.md "Versioning". */
    version: text("version").notNull().default("v1"),
    status: text("status", { enum: LOAN_PRODUCT_STATUSES }).notNull(),
    ...lendingTermsColumns(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [index("loan_products_tenant_idx").on(t.tenantId)],
);
