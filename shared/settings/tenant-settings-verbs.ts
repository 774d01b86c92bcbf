import { eq } from "drizzle-orm";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { checkBranding, type Branding } from "../domain/branding.ts";
import { validationError } from "../domain/errors.ts";
import type { VerbDeps } from "../verbs.ts";

/** A tenant's settings as the API shows them; `updatedAt` null when never saved. */
export type TenantSettings = {
  requiresKycBeforeFunding: boolean;
  branding: Branding;
  updatedAt: Date | null;
};

type SettingsRow = typeof tenantSettings.$inferSelect;

/** What a tenant without a saved row (or without a saved company name) shows. */
const fromRow = (row: SettingsRow | undefined, tenantName: string): TenantSettings => ({
  requiresKycBeforeFunding: row?.requiresKycBeforeFunding ?? false,
  branding: {
    companyName: row?.companyName ?? tenantName,
    logoUrl: row?.logoUrl ?? null,
    primaryColor: row?.primaryColor ?? null,
    supportEmail: row?.supportEmail ?? null,
    termsUrl: row?.termsUrl ?? null,
  },
  updatedAt: row?.updatedAt ?? null,
});

/**
 * The tenant's settings. Signup writes the row; a tenant without one (created
 * before settings existed, or by a script) reads as the defaults: no KYC gate
 * before funding, branding with the tenant's name and nothing else.
 */
export async function getTenantSettings({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; tenantName: string }): Promise<TenantSettings> {
  const [row] = await db.select().from(tenantSettings).where(eq(tenantSettings.tenantId, input.tenantId)).limit(1);
  return fromRow(row, input.tenantName);
}

/**
 * Replaces the tenant's settings as a whole (PUT semantics: a null branding
 * field clears it). One upsert, so a tenant without a row gets one.
 */
export async function replaceTenantSettings(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; requiresKycBeforeFunding: boolean; branding: Branding; now: Date },
): Promise<TenantSettings> {
  const errors = checkBranding(input.branding);
  if (errors.length > 0) throw validationError(errors);
  const values = {
    requiresKycBeforeFunding: input.requiresKycBeforeFunding,
    companyName: input.branding.companyName.trim(),
    logoUrl: input.branding.logoUrl,
    primaryColor: input.branding.primaryColor,
    supportEmail: input.branding.supportEmail,
    termsUrl: input.branding.termsUrl,
    updatedAt: input.now,
  };
  const [row] = await db
    .insert(tenantSettings)
    .values({ tenantId: input.tenantId, ...values })
    .onConflictDoUpdate({ target: tenantSettings.tenantId, set: values })
    .returning();
  return fromRow(row, values.companyName);
}
