import { z } from "@hono/zod-openapi";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import { PLAIN_TEXT_PATTERN, PLAIN_TEXT_RULE } from "../../../../shared/domain/plain-text.ts";
import type { BorrowerWithAudit } from "../../../../shared/borrowers/borrower-verbs.ts";
import { KYC_STATUSES } from "../../../../shared/domain/underwriting.ts";
import { iso, isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const BorrowerParamSchema = z.object({
  // Trimmed as `borrowerRef` is in a body: `PATCH /v1/borrowers/%20bob%20/kyc` is bob's, not a second borrower's.
  id: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(PLAIN_TEXT_PATTERN, PLAIN_TEXT_RULE)
    .openapi({
      param: { name: "id", in: "path" },
      description: "The borrower's id, or your `borrowerRef` for it (URL-encoded; surrounding spaces are trimmed, as in a body's `borrowerRef`).",
      example: "user-42",
    }),
});

export const KycStatusSchema = z.enum(KYC_STATUSES).openapi({ example: "VERIFIED" });

export const SetKycBodySchema = z
  .object({
    status: KycStatusSchema,
    merchantUserId: plainText(255).openapi({ description: "Your internal reference for who or what performed the check.", example: "kyc-ops-7" }),
  })
  .openapi("BorrowerKycRequest");

const KycAuditEntrySchema = z
  .object({
    id: z.uuid(),
    fromStatus: KycStatusSchema,
    toStatus: KycStatusSchema,
    merchantUserId: z.string().nullable(),
    actor: z.string().openapi({ description: "Who made the change: `apiKey:<id>` or `user:<id>`.", example: "apiKey:5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b" }),
    createdAt: TimestampSchema,
  })
  .openapi("BorrowerKycAuditEntry");

export const BorrowerSchema = z
  .object({
    id: z.uuid(),
    borrowerRef: z.string(),
    status: KycStatusSchema.openapi({ description: 'The KYC status (SPEC.md "Borrower": KYC `status`); the same as `kyc.status`.' }),
    verifiedAt: TimestampSchema.nullable().openapi({
      description: "Stamped by the service (the tenant's clock) on every KYC update; null before the first. The same as `kyc.verifiedAt`.",
    }),
    merchantUserId: z
      .string()
      .nullable()
      .openapi({ description: "Who or what performed the last KYC check, in your words; the same as `kyc.merchantUserId`." }),
    kyc: z.object({
      status: KycStatusSchema,
      verifiedAt: TimestampSchema.nullable().openapi({
        description: "Stamped by the service (the tenant's clock) on every KYC update; null before the first.",
      }),
      merchantUserId: z.string().nullable(),
    }),
    kycAudit: z.array(KycAuditEntrySchema).openapi({ description: "Every KYC update, oldest first; immutable." }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("Borrower");

export const borrowerView = ({ borrower, audit }: BorrowerWithAudit) => ({
  id: borrower.id,
  borrowerRef: borrower.borrowerRef,
  // SPEC.md's Borrower fields at the top, as the table names them; `kyc` groups the same three.
  status: borrower.kycStatus,
  verifiedAt: isoOrNull(borrower.verifiedAt),
  merchantUserId: borrower.merchantUserId,
  kyc: { status: borrower.kycStatus, verifiedAt: isoOrNull(borrower.verifiedAt), merchantUserId: borrower.merchantUserId },
  kycAudit: audit.map((a) => ({
    id: a.id,
    fromStatus: a.fromStatus,
    toStatus: a.toStatus,
    merchantUserId: a.merchantUserId,
    actor: a.actor,
    createdAt: iso(a.createdAt),
  })),
  createdAt: iso(borrower.createdAt),
  updatedAt: iso(borrower.updatedAt),
});
