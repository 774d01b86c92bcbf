import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { TENANT_MODES } from "../../shared/domain/vocabularies.ts";
import { tenantIdColumn } from "./tenant-ref.ts";
import { timestamp } from "./columns.ts";
import { users } from "./users.ts";

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    name: text("name").notNull(),
    /** The first characters of the key, shown in lists so merchants can tell keys apart. */
    prefix: text("prefix").notNull(),
    /** What the key acts in (DECISIONS.md "Modes"): `svc_test_…` keys are sandbox, `svc_live_…` live. */
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    /** SHA-256 (hex) of the whole key; the key itself is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    createdByUserId: text("created_by_user_id").references(() => users.id),
    createdAt: timestamp("created_at").notNull(),
    revokedAt: timestamp("revoked_at"),
  },
  (t) => [index("api_keys_tenant_idx").on(t.tenantId, t.createdAt)],
);
