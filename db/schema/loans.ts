import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { borrowers } from "./borrowers.ts";
import { bool, json, timestamp, units } from "./columns.ts";
import { liquidityPools } from "./liquidity-pools.ts";
import { CHANNELS, FUNDING_STATES } from "./loan-vocabularies.ts";
import { loanProducts } from "./loan-products.ts";
import { CHAINS, DECISION_OUTCOMES, FEE_TYPES, LOAN_STATUSES, STABLECOINS, TENANT_MODES } from "../../shared/domain/vocabularies.ts";
import { widgetPrograms } from "./widget-programs.ts";

export type DecisionReason = { code: string; message: string };

/**
 * A loan. Terms (fees, grace, tenure) are copied from the product when the
 * loan is created, so a later configuration change never reprices it.
 */
export const loans = sqliteTable(
  "loans",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    idempotencyKey: text("idempotency_key").notNull(),
    /**
     * The key space of `idempotencyKey`: "api" for POST /v1/loans,
     * `embed:<programId>:<wallet>` for a widget draw, so neither can find or
     * block the other's loans (see `idempotencyScopeOf`).
     */
    idempotencyScope: text("idempotency_scope").notNull().default("api"),
    loanProductId: text("loan_product_id")
      .notNull()
      .references(() => loanProducts.id),
    borrowerId: text("borrower_id")
      .notNull()
      .references(() => borrowers.id),
    borrowerRef: text("borrower_ref").notNull(),
    borrowerWalletAddress: text("borrower_wallet_address").notNull(),
    chain: text("chain", { enum: CHAINS }).notNull(),
    /** From the chain at creation (a sandbox chain: sandbox); its events, settlements and notifications carry it. */
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    stablecoin: text("stablecoin", { enum: STABLECOINS }).notNull(),
    principal: units("principal_units").notNull(),
    processingFee: units("processing_fee_units").notNull(),
    lateFeeType: text("late_fee_type", { enum: FEE_TYPES }).notNull(),
    lateFeeValue: units("late_fee_value").notNull(),
    dailyLateFee: units("daily_late_fee_units").notNull(),
    /** Late-fee days the sweep has recorded; views compute the current count from the clock. */
    lateFeeDays: integer("late_fee_days").notNull().default(0),
    /** Repaid so far (partial payments add up; a full repayment brings it to the total due). */
    paid: units("paid_units").notNull().default(0n),
    /** Received beyond the total due: refundable to the borrower. */
    surplus: units("surplus_units").notNull().default(0n),
    tenureDays: integer("tenure_days").notNull(),
    gracePeriodDays: integer("grace_period_days").notNull(),
    status: text("status", { enum: LOAN_STATUSES }).notNull(),
    decisionOutcome: text("decision_outcome", { enum: DECISION_OUTCOMES }),
    decisionReasons: json<DecisionReason[]>("decision_reasons"),
    policyVersion: integer("policy_version"),
    decidedAt: timestamp("decided_at"),
    reviewedBy: text("reviewed_by"),
    reviewedAt: timestamp("reviewed_at"),
    reviewNote: text("review_note"),
    fundingState: text("funding_state", { enum: FUNDING_STATES }).notNull().default("NONE"),
    /** Set at creation from the tenant's `requiresKycBeforeFunding`, for API-originated loans. */
    requiresKycGate: bool("requires_kyc_gate").notNull().default(false),
    kycConfirmedAt: timestamp("kyc_confirmed_at"),
    agreementId: text("agreement_id"),
    programId: text("program_id").references(() => widgetPrograms.id),
    channel: text("channel", { enum: CHANNELS }),
    poolId: text("pool_id").references(() => liquidityPools.id),
    fundingTxHash: text("funding_tx_hash"),
    /**
     * Live loans: the DISBURSEMENT wallet the principal is sent from, fixed with
     * the reservation (migration 0034). A transfer is idempotent per sender, so
     * a RESERVED loan asks this wallet's record again and never sends from
     * another; cleared when the reservation is released.
     */
    fundingFrom: text("funding_from"),
    /**
     * The number of the loan's latest reservation (migration 0038): each one
     * takes the next. A live transfer names it, and the sender's record,
     * once it has answered a failure for a reservation, signs nothing more
     * for it or an earlier one, so a run left over from a released
     * reservation never sends after the loan reserved again.
     */
    fundingReservation: integer("funding_reservation").notNull().default(0),
    dueAt: timestamp("due_at"),
    /** When `loan.overdue` fired; set once. */
    overdueAt: timestamp("overdue_at"),
    fundedAt: timestamp("funded_at"),
    repaidAt: timestamp("repaid_at"),
    /** When the terms put the default: `dueAt` + the grace period. */
    defaultedAt: timestamp("defaulted_at"),
    /** When the default was recorded, and `loan.defaulted` fired (the sweep's time; migration 0039; null before it). */
    defaultRecordedAt: timestamp("default_recorded_at"),
    /**
     * A fresh random token per write. Every change is conditional on the token
     * it read, and the rows that go with the change (events, settlements, pool
     * movements) are inserted only if the loan carries the new token, so a
     * change and its consequences commit together or not at all.
     */
    writeToken: text("write_token").notNull(),
    /**
     * The funding retry job's turn that last took this loan while it waited to be funded (migration 0044): the run's
     * time in unix ms, or one past the highest mark when that is not later; null before any. Its rotation only, not
     * part of the loan's state.
     */
    fundingRetryMark: integer("funding_retry_mark"),
    /** When the overdue/default sweep of this loan last threw (unix ms, system clock; migration 0045): it is left out of the sweep's pages for a while. */
    sweepFailedAt: integer("sweep_failed_at"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("loans_tenant_scope_idempotency_idx").on(t.tenantId, t.idempotencyScope, t.idempotencyKey),
    index("loans_tenant_created_idx").on(t.tenantId, t.createdAt, t.id),
    index("loans_tenant_mode_created_idx").on(t.tenantId, t.mode, t.createdAt, t.id),
    index("loans_tenant_status_created_idx").on(t.tenantId, t.status, t.decisionOutcome, t.createdAt, t.id),
    // A borrower's open loans of a mode (migration 0024: three equality terms, so the planner never takes tenant and mode alone).
    index("loans_tenant_borrower_mode_idx").on(t.tenantId, t.borrowerId, t.mode, t.status),
    // GET /v1/loans filtered by status (of a key's mode), by borrower ref or by wallet (migration 0024).
    index("loans_tenant_mode_status_created_idx").on(t.tenantId, t.mode, t.status, t.createdAt, t.id),
    index("loans_tenant_ref_created_idx").on(t.tenantId, t.borrowerRef, t.createdAt, t.id),
    index("loans_tenant_wallet_created_idx").on(t.tenantId, t.borrowerWalletAddress, t.createdAt, t.id),
    // A credit line's open principal (widget loans only).
    index("loans_tenant_line_idx").on(t.tenantId, t.programId, t.borrowerWalletAddress, t.status).where(sql`program_id IS NOT NULL`),
    // The day's numbers: a mode's loans of a stablecoin changed since midnight (migration 0027).
    index("loans_tenant_mode_coin_updated_idx").on(t.tenantId, t.mode, t.stablecoin, t.updatedAt),
    index("loans_status_due_idx").on(t.status, t.dueAt),
    index("loans_tenant_status_due_idx").on(t.tenantId, t.status, t.dueAt),
    index("loans_funding_state_idx").on(t.fundingState, t.tenantId, t.createdAt),
    // Loans waiting to be funded, in the order the retry job takes them (migration 0044).
    index("loans_funding_retry_idx")
      .on(t.mode, t.fundingRetryMark, t.createdAt, t.id)
      .where(sql`status = 'CREATED' AND decision_outcome = 'APPROVED' AND funding_state IN ('NONE', 'AWAITING_LIQUIDITY', 'HELD', 'RESERVED')`),
  ],
);

export type LoanRow = typeof loans.$inferSelect;
