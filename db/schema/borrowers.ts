import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { timestamp } from "./columns.ts";
import { KYC_STATUSES } from "../../shared/domain/vocabularies.ts";

/** A borrower is the pair (tenant, borrowerRef); created on first use. */
export const borrowers = sqliteTable(
  "borrowers",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    borrowerRef: text("borrower_ref").notNull(),
    kycStatus: text("kyc_status", { enum: KYC_STATUSES }).notNull().default("PENDING"),
    /** Stamped by the service on every KYC update. */
    verifiedAt: timestamp("verified_at"),
    merchantUserId: text("merchant_user_id"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [uniqueIndex("borrowers_tenant_ref_idx").on(t.tenantId, t.borrowerRef)],
);

/** Immutable: triggers refuse UPDATE and DELETE. */
export const borrowerKycAudit = sqliteTable(
  "borrower_kyc_audit",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    borrowerId: text("borrower_id")
      .notNull()
      .references(() => borrowers.id),
    fromStatus: text("from_status", { enum: KYC_STATUSES }).notNull(),
    toStatus: text("to_status", { enum: KYC_STATUSES }).notNull(),
    merchantUserId: text("merchant_user_id"),
    /** Who changed it: `apiKey:<id>` or `user:<id>`. */
    actor: text("actor").notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("borrower_kyc_audit_borrower_idx").on(t.borrowerId, t.createdAt)],
);
