import { z } from "@hono/zod-openapi";
import { type kybSubmissions, OPERATOR_ACTIONS, type operatorAudit } from "../../db/schema/go-live.ts";
import { ISO_COUNTRY_CODES } from "../domain/countries.ts";
import { GO_LIVE_STATUSES, GO_LIVE_STEP_KEYS, type GoLiveStep, KYB_STATUSES } from "../domain/go-live.ts";
import { TENANT_MODES } from "../domain/vocabularies.ts";
import { iso, isoOrNull, TimestampSchema } from "./common.ts";
import { plainText } from "./plain-text.ts";

/** What the operator and the tenant read (KYB, commercial terms): plain text (shared/domain/plain-text.ts). */
const text = plainText;

export const KybDocumentSchema = z
  .object({
    kind: text(64).openapi({ example: "certificate_of_incorporation", description: "What the document is (free text, at most 64 characters)." }),
    fileName: text(255).openapi({ example: "incorporation.pdf" }),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, "must be a SHA-256 digest: 64 hexadecimal characters")
      .openapi({ example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" }),
  })
  .openapi("KybDocument");

export const KybBodySchema = z
  .object({
    legalName: text(200).openapi({ example: "Acme Pay Ltd" }),
    registrationNumber: text(64).openapi({ example: "HRB 123456" }),
    country: z
      .string()
      .refine((c) => ISO_COUNTRY_CODES.has(c.toUpperCase()), "must be an ISO 3166-1 alpha-2 country code")
      .openapi({ example: "DE", description: "ISO 3166-1 alpha-2 (case-insensitive; stored upper case)." }),
    documents: z
      .array(KybDocumentSchema)
      .min(1)
      .max(20)
      .openapi({ description: "References to the documents (1 to 20): kind, file name and SHA-256; not uploads." }),
  })
  .openapi("KybSubmissionRequest");

export const KybSubmissionSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(KYB_STATUSES),
    legalName: z.string(),
    registrationNumber: z.string(),
    country: z.string(),
    documents: z.array(KybDocumentSchema),
    submittedAt: TimestampSchema,
  })
  .openapi("KybSubmission");

export const GoLiveStepSchema = z
  .object({
    step: z.number().int().min(1).max(10),
    key: z.enum(GO_LIVE_STEP_KEYS),
    title: z.string(),
    status: z.enum(GO_LIVE_STATUSES),
    detail: z.string().openapi({ description: "PENDING: what to do next, in a sentence; BLOCKED: which step it waits for." }),
    completedAt: TimestampSchema.nullable(),
  })
  .openapi("GoLiveStep");

export const OperatorAuditEntrySchema = z
  .object({
    id: z.uuid(),
    action: z.enum(OPERATOR_ACTIONS),
    decision: z.string().nullable().openapi({ description: "APPROVED or REJECTED for a KYB decision; the terms' reference for commercial terms." }),
    note: z.string().nullable(),
    actor: z.string().openapi({ example: "operator" }),
    at: TimestampSchema,
  })
  .openapi("OperatorAuditEntry");

export const GoLiveSchema = z
  .object({
    mode: z.enum(TENANT_MODES),
    certifiedAt: TimestampSchema.nullable(),
    nextStep: z.enum(GO_LIVE_STEP_KEYS).nullable(),
    steps: z.array(GoLiveStepSchema),
    audit: z.array(OperatorAuditEntrySchema).openapi({ description: "Every platform operator action on this tenant, oldest first (immutable)." }),
  })
  .openapi("GoLive");

export const CertifiedSchema = z.object({ mode: z.literal("live"), certifiedAt: TimestampSchema }).openapi("GoLiveCertified");

export const stepView = (s: GoLiveStep) => ({ ...s, completedAt: isoOrNull(s.completedAt) });

export const auditView = (a: typeof operatorAudit.$inferSelect) => ({
  id: a.id,
  action: a.action,
  decision: a.decision,
  note: a.note,
  actor: a.actor,
  at: iso(a.createdAt),
});

const note = text(1000).nullable().optional().openapi({ description: "At most 1000 characters." });

export const KybDecisionBodySchema = z
  .object({
    decision: z.enum(["APPROVED", "REJECTED"]),
    note,
    kybId: z.uuid().optional().openapi({
      description:
        "The submission reviewed (its `id` in GET /v1/operator/tenants). Given, the decision applies to it only: a newer submission since (the tenant resubmitted while it was being reviewed) answers 409 and nothing is decided. Omitted, the decision applies to the newest submission.",
    }),
  })
  .openapi("KybDecisionRequest");

export const CommercialTermsBodySchema = z
  .object({ reference: text(200).openapi({ example: "MSA-2026-014", description: "The signed agreement's reference." }), note })
  .openapi("CommercialTermsRequest");

export const OperatorTenantSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    mode: z.enum(TENANT_MODES),
    certifiedAt: TimestampSchema.nullable(),
    liveEnabledAt: TimestampSchema.nullable().openapi({ description: 'When live was enabled: `certifiedAt` (DECISIONS.md "Modes").' }),
    kybStatus: z.enum(KYB_STATUSES).nullable(),
    // A union, not `.nullable()`: a nullable registered schema renders as `allOf: [$ref, {type: [object, null]}]`, which null cannot satisfy.
    kyb: z.union([KybSubmissionSchema, z.null()]).openapi({ description: "The latest KYB submission; null before the first" }),
    kybMatches: z
      .array(
        z.object({
          tenantId: z.uuid(),
          kybId: z.uuid(),
          status: z.enum(KYB_STATUSES),
          matched: z
            .array(z.string())
            .openapi({ example: ["registrationNumber", "document:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"] }),
        }),
      )
      .openapi({
        description:
          "Other tenants' KYB submissions (newest first, at most 20) sharing the latest one's registration number in the same country (`registrationNumber`) or a document by its sha256 (`document:<sha256>`): evidence possibly copied from another business. Empty when none.",
      }),
    createdAt: TimestampSchema,
  })
  .openapi("OperatorTenant");

export const kybView = (k: typeof kybSubmissions.$inferSelect) => ({
  id: k.id,
  status: k.status,
  legalName: k.legalName,
  registrationNumber: k.registrationNumber,
  country: k.country,
  documents: k.documents,
  submittedAt: iso(k.submittedAt),
});
