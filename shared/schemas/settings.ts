import { z } from "@hono/zod-openapi";
import { plainText } from "./plain-text.ts";
import { HEX_COLOR_RULE, httpsUrlProblem, isHexColor, MAX_COMPANY_NAME_LENGTH, MAX_URL_LENGTH } from "../domain/branding.ts";
import type { TenantSettings } from "../settings/tenant-settings-verbs.ts";
import { EmailSchema } from "./auth.ts";
import { isoOrNull, TimestampSchema } from "./common.ts";

/** An https URL the widget may render (`javascript:`, `data:`, `http:` rejected). */
export const HttpsUrlSchema = z
  .string()
  .superRefine((value, ctx) => {
    const problem = httpsUrlProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({ format: "uri", maxLength: MAX_URL_LENGTH, example: "https://cdn.merchant.example/logo.png" });

export const HexColorSchema = z.string().refine(isHexColor, HEX_COLOR_RULE).openapi({ pattern: "^#[0-9A-Fa-f]{6}$", example: "#1A2B3C" });

const CompanyNameSchema = plainText(MAX_COMPANY_NAME_LENGTH).openapi({ example: "Acme Store" });

/** PUT /v1/settings: a full replacement. Every key is required; null clears an optional branding field. */
export const SettingsBodySchema = z
  .object({
    requiresKycBeforeFunding: z.boolean().openapi({ description: "Whether a borrower's KYC must be confirmed before a loan is funded." }),
    branding: z.object({
      companyName: CompanyNameSchema,
      logoUrl: HttpsUrlSchema.nullable().openapi({ description: "https only; null clears it." }),
      primaryColor: HexColorSchema.nullable().openapi({ description: "`#RRGGBB`; null clears it." }),
      supportEmail: EmailSchema.nullable().openapi({ description: "null clears it." }),
      termsUrl: HttpsUrlSchema.nullable().openapi({ description: "https only; null clears it.", example: "https://merchant.example/terms" }),
    }),
  })
  .openapi("SettingsRequest");

export const BrandingSchema = z
  .object({
    companyName: z.string(),
    logoUrl: z.string().nullable(),
    primaryColor: z.string().nullable(),
    supportEmail: z.string().nullable(),
    termsUrl: z.string().nullable(),
  })
  .openapi("Branding");

export const SettingsSchema = z
  .object({
    requiresKycBeforeFunding: z.boolean(),
    branding: BrandingSchema,
    updatedAt: TimestampSchema.nullable().openapi({ description: "Last save; null when the settings were never saved." }),
  })
  .openapi("Settings");

export const settingsView = (s: TenantSettings) => ({
  requiresKycBeforeFunding: s.requiresKycBeforeFunding,
  branding: { ...s.branding },
  updatedAt: isoOrNull(s.updatedAt),
});
