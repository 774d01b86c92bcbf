import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bool, timestamp } from "./columns.ts";
import { tenants } from "./tenants.ts";

/** One row per tenant: loan-level KYC gate and branding. */
export const tenantSettings = sqliteTable("tenant_settings", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id),
  requiresKycBeforeFunding: bool("requires_kyc_before_funding").notNull().default(false),
  companyName: text("company_name"),
  logoUrl: text("logo_url"),
  primaryColor: text("primary_color"),
  supportEmail: text("support_email"),
  termsUrl: text("terms_url"),
  updatedAt: timestamp("updated_at").notNull(),
});
