import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { timestamp } from "./columns.ts";
import { lendingTermsColumns } from "./lending-terms.ts";

/** A merchant configuration: exactly one rail, its limits and pricing. */
export const merchantConfigs = sqliteTable(
  "merchant_configs",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    ...lendingTermsColumns(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [index("merchant_configs_tenant_idx").on(t.tenantId, t.createdAt)],
);
