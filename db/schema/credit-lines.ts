import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { tenantIdColumn } from "./tenant-ref.ts";
import { CHAINS } from "../../shared/domain/vocabularies.ts";
import { widgetPrograms } from "./widget-programs.ts";

/**
 * A widget borrower's revolving credit line, durable per (program, wallet):
 * the merchant's KYC confirmation and the accepted agreement are kept here,
 * so a returning borrower is not asked again.
 */
export const creditLines = sqliteTable(
  "credit_lines",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    programId: text("program_id")
      .notNull()
      .references(() => widgetPrograms.id),
    walletAddress: text("wallet_address").notNull(),
    chain: text("chain", { enum: CHAINS }).notNull(),
    /** The borrower the line's loans belong to: `wallet:<address>` until the merchant names one. */
    borrowerRef: text("borrower_ref").notNull(),
    kycConfirmedAt: timestamp("kyc_confirmed_at"),
    kycMerchantUserId: text("kyc_merchant_user_id"),
    kycReference: text("kyc_reference"),
    agreementAcceptedAt: timestamp("agreement_accepted_at"),
    agreementChallengeId: text("agreement_challenge_id"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("credit_lines_program_wallet_idx").on(t.programId, t.walletAddress),
    index("credit_lines_tenant_idx").on(t.tenantId, t.createdAt),
    // A borrower's KYC failed withdraws its lines' confirmation (migration 0047).
    index("credit_lines_tenant_borrower_idx").on(t.tenantId, t.borrowerRef),
  ],
);
