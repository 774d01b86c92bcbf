import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { TENANT_MODES } from "../../shared/domain/vocabularies.ts";
import { timestamp } from "./columns.ts";

export const tenants = sqliteTable(
  "tenants",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    /** Set when the go-live checklist completes; live chains need it. */
    certifiedAt: timestamp("certified_at"),
    /** The sandbox clock: how far this tenant's clock runs ahead of the system clock. */
    clockOffsetMs: integer("clock_offset_ms").notNull().default(0),
    createdAt: timestamp("created_at").notNull(),
    /**
     * Bumped by triggers (migration 0023) on any change to what GET /v1/me
     * describes of the tenant: its configurations, loan products, widget
     * programs and users. The api's description cache is valid while it holds.
     */
    descriptionVersion: integer("description_version").notNull().default(0),
  },
  // The sweep reads the tenants whose clock moved (> 0) through this index, not every tenant.
  (t) => [index("tenants_clock_offset_idx").on(t.clockOffsetMs)],
);
