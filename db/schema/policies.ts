import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { bool, json, timestamp, units } from "./columns.ts";

/** Underwriting policies; each PUT adds a version, the highest is current. */
export const policies = sqliteTable(
  "policies",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    version: integer("version").notNull(),
    requireKycVerified: bool("require_kyc_verified").notNull(),
    manualReviewAbove: units("manual_review_above_units"),
    maxOpenLoansPerBorrower: integer("max_open_loans_per_borrower"),
    blockedWallets: json<string[]>("blocked_wallets").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [uniqueIndex("policies_tenant_version_idx").on(t.tenantId, t.version)],
);
