import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { KYB_STATUSES } from "../../shared/domain/go-live.ts";
import { json, timestamp } from "./columns.ts";
import { tenantIdColumn } from "./tenant-ref.ts";

export type KybDocument = { kind: string; fileName: string; sha256: string };

/** A merchant's KYB submissions; the newest is its KYB. The operator decides a SUBMITTED one once. */
export const kybSubmissions = sqliteTable(
  "kyb_submissions",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    legalName: text("legal_name").notNull(),
    registrationNumber: text("registration_number").notNull(),
    /** ISO 3166-1 alpha-2, upper case. */
    country: text("country").notNull(),
    /** References (kind, file name, SHA-256), not uploads. */
    documents: json<KybDocument[]>("documents").notNull(),
    status: text("status", { enum: KYB_STATUSES }).notNull(),
    /** `user:<id>` of the Owner or Admin who submitted. */
    submittedBy: text("submitted_by").notNull(),
    submittedAt: timestamp("submitted_at").notNull(),
    decidedAt: timestamp("decided_at"),
    decisionNote: text("decision_note"),
  },
  (t) => [index("kyb_submissions_tenant_idx").on(t.tenantId, t.submittedAt)],
);

/** Commercial terms the operator recorded; immutable (triggers in 0012). */
export const commercialTerms = sqliteTable(
  "commercial_terms",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    reference: text("reference").notNull(),
    note: text("note"),
    recordedAt: timestamp("recorded_at").notNull(),
  },
  (t) => [index("commercial_terms_tenant_idx").on(t.tenantId, t.recordedAt)],
);

export const OPERATOR_ACTIONS = ["KYB_DECIDED", "COMMERCIAL_TERMS_RECORDED", "SIGNER_INSTALLED"] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

/** Every operator action on a tenant, written with the change; immutable (triggers in 0012). */
export const operatorAudit = sqliteTable(
  "operator_audit",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    /** Who acted: `operator` (one platform operator key today). */
    actor: text("actor").notNull(),
    action: text("action", { enum: OPERATOR_ACTIONS }).notNull(),
    /** APPROVED / REJECTED for a KYB decision; the terms' reference for commercial terms. */
    decision: text("decision"),
    note: text("note"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("operator_audit_tenant_idx").on(t.tenantId, t.createdAt)],
);

/**
 * Insertion order, for rows written in the same millisecond (a newer KYB
 * submission, audit entries in the order they were written): SQLite's rowid,
 * which these tables keep (they are not WITHOUT ROWID) and which only grows
 * while rows are never deleted (operator_audit refuses deletes; KYB rows are
 * never deleted).
 */
export const KYB_INSERTION_ORDER = sql.raw("kyb_submissions.rowid");
export const AUDIT_INSERTION_ORDER = sql.raw("operator_audit.rowid");
