import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { tenantIdColumn } from "./tenant-ref.ts";
import { bool, timestamp, units } from "./columns.ts";
import { SETTLEMENT_KINDS, SETTLEMENT_STATUSES } from "./loan-vocabularies.ts";
import { loans } from "./loans.ts";
import { CHAINS, STABLECOINS, TENANT_MODES } from "../../shared/domain/vocabularies.ts";

/** Loan-level KYC confirmations from the merchant's backend; immutable, newest wins. */
export const loanKycConfirmations = sqliteTable(
  "loan_kyc_confirmations",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    loanId: text("loan_id")
      .notNull()
      .references(() => loans.id),
    verified: bool("verified").notNull(),
    merchantUserId: text("merchant_user_id"),
    reference: text("reference"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("loan_kyc_confirmations_loan_idx").on(t.loanId, t.createdAt)],
);

/** The agreement a borrower signed for a loan: one per loan, immutable. */
export const agreements = sqliteTable("agreements", {
  id: text("id").primaryKey(),
  tenantId: tenantIdColumn(),
  loanId: text("loan_id")
    .notNull()
    .unique()
    .references(() => loans.id),
  challengeId: text("challenge_id").notNull().unique(),
  walletAddress: text("wallet_address").notNull(),
  chain: text("chain", { enum: CHAINS }).notNull(),
  /** The challenge message the wallet signed. */
  message: text("message").notNull(),
  /** The exact agreement text: the merchant's `agreementText` when given, else the message. */
  agreementText: text("agreement_text").notNull(),
  walletSignature: text("wallet_signature").notNull(),
  createdAt: timestamp("created_at").notNull(),
  /** TON Connect signData only (null elsewhere): the wallet's public key, the signature's timestamp (unix seconds) and domain. */
  publicKey: text("public_key"),
  signedTimestamp: integer("signed_timestamp"),
  domain: text("domain"),
});

/** Every money movement of a loan (funding now; repayments later). */
export const settlements = sqliteTable(
  "settlements",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    loanId: text("loan_id")
      .notNull()
      .references(() => loans.id),
    kind: text("kind", { enum: SETTLEMENT_KINDS }).notNull(),
    status: text("status", { enum: SETTLEMENT_STATUSES }).notNull(),
    amount: units("amount_units").notNull(),
    chain: text("chain", { enum: CHAINS }).notNull(),
    /** The loan's mode. */
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    asset: text("asset", { enum: STABLECOINS }).notNull(),
    txHash: text("tx_hash"),
    fromAddress: text("from_address"),
    toAddress: text("to_address"),
    blockNumber: integer("block_number"),
    logIndex: integer("log_index"),
    /**
     * When the transfer was made, on the loan's clock: its block's time (a
     * sandbox ledger's blocks carry the tenant's sandbox time). For funding,
     * the time it was sent. A repayment was judged at it (apply-repayment.ts).
     */
    paidAt: timestamp("paid_at").notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    index("settlements_loan_idx").on(t.tenantId, t.loanId, t.createdAt),
    // A REVERSED row (a reorg un-credited it) steps aside for the same payment credited again.
    uniqueIndex("settlements_loan_kind_tx_idx").on(t.loanId, t.kind, t.txHash, t.logIndex).where(sql`status <> 'REVERSED'`),
    index("settlements_chain_block_idx").on(t.chain, t.blockNumber),
  ],
);
