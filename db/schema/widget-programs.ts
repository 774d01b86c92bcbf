import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { json, timestamp } from "./columns.ts";
import { merchantConfigs } from "./merchant-configs.ts";

/** A widget program: its own embed key, rail (through its configuration) and allowed origins. */
export const widgetPrograms = sqliteTable(
  "widget_programs",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    merchantConfigId: text("merchant_config_id")
      .notNull()
      .references(() => merchantConfigs.id),
    name: text("name").notNull(),
    embedKey: text("embed_key").notNull().unique(),
    allowedOrigins: json<string[]>("allowed_origins").notNull(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
    /** Deleted programs keep their row (loans reference them) but their key answers 404. */
    deletedAt: timestamp("deleted_at"),
  },
  (t) => [index("widget_programs_tenant_idx").on(t.tenantId, t.createdAt)],
);
