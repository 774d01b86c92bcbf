import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, units } from "./columns.ts";
import { loans } from "./loans.ts";
import { tenants } from "./tenants.ts";
import { CHAINS } from "../../shared/domain/vocabularies.ts";

/**
 * A payment to the platform the listener could not apply (wrong or missing
 * comment, unknown loan, a loan already repaid): kept, never dropped, until
 * an Owner/Admin attributes it. `tenantId` is known when the loan is (or, in
 * the sandbox, from the tenant whose call made the transfer).
 */
export const unmatchedPayments = sqliteTable(
  "unmatched_payments",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").references(() => tenants.id),
    chain: text("chain", { enum: CHAINS }).notNull(),
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    blockNumber: integer("block_number").notNull(),
    fromAddress: text("from_address").notNull(),
    toAddress: text("to_address").notNull(),
    token: text("token").notNull(),
    amount: units("amount_units").notNull(),
    comment: text("comment"),
    claimedLoanId: text("claimed_loan_id"),
    reason: text("reason").notNull(),
    /** In the chain's settlement asset, so it can repay a loan once attributed (migration 0035); false for a TON transfer or a forged jetton notification. */
    settles: integer("settles", { mode: "boolean" }).notNull().default(true),
    attributedLoanId: text("attributed_loan_id").references(() => loans.id),
    attributedAt: timestamp("attributed_at"),
    attributedBy: text("attributed_by"),
    /** A fresh token the attribution's batch claims the payment with; the loan's credit is conditional on it. */
    attributionClaim: text("attribution_claim"),
    /**
     * When the payment was made: its transfer's block time, on the tenant's
     * clock of the chain's mode (a sandbox ledger's blocks carry the tenant's
     * sandbox time). An attribution judges the payment at it.
     */
    paidAt: timestamp("paid_at").notNull(),
    /** When the service kept it. */
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    // Per tenant too: one signed transaction replayed on two tenants' sandbox ledgers is two payments.
    uniqueIndex("unmatched_payments_tx_idx").on(t.chain, t.txHash, t.logIndex, sql`coalesce(${t.tenantId}, '')`),
    index("unmatched_payments_tenant_idx").on(t.tenantId, t.createdAt, t.id),
    index("unmatched_payments_chain_block_idx").on(t.chain, t.blockNumber),
  ],
);

/** The last block of each live chain the settlement listener has applied (sandbox ledgers: `sandboxLedgers`). */
export const chainCursors = sqliteTable("chain_cursors", {
  chain: text("chain", { enum: CHAINS }).primaryKey(),
  lastBlock: integer("last_block").notNull(),
  updatedAt: timestamp("updated_at").notNull(),
  /** Consecutive polls that failed (RPC error, rate limit); 0 after one that succeeds. */
  failures: integer("failures").notNull().default(0),
  /** No poll before this (back-off after a failure); null: due. */
  backoffUntil: timestamp("backoff_until"),
  /** Live EVM: the last block searched for reverted repay calls (behind `lastBlock`; null: from `lastBlock`). Migration 0037. */
  revertsScannedTo: integer("reverts_scanned_to"),
  /** Live EVM: the poll holding the chain (one at a time), and until when unless it renews (migration 0043); null: free. */
  leaseId: text("lease_id"),
  leaseUntil: timestamp("lease_until"),
  /**
   * Live EVM: the block time of `lastBlock` as read (migration 0048): every payment made before it has been read, so a
   * live loan of the chain is judged overdue or defaulted as of this time at the latest (shared/sweeps/sweep-loans.ts).
   * It stays while a poll fails or a payment waits for its confirmations; null after a reorg moved the cursor back.
   */
  readThroughAt: timestamp("read_through_at"),
});

/**
 * Live EVM: the hash of each block the listener credited from (`credited`)
 * and of its cursor block, as read then. A poll compares them with the
 * chain's: a changed hash is an orphaned block (evm-listener.ts).
 */
export const chainBlocks = sqliteTable(
  "chain_blocks",
  {
    chain: text("chain", { enum: CHAINS }).notNull(),
    blockNumber: integer("block_number").notNull(),
    blockHash: text("block_hash").notNull(),
    credited: integer("credited", { mode: "boolean" }).notNull().default(false),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.chain, t.blockNumber] })],
);

/**
 * A live payment the listener read but could not apply (its loan's writer
 * failed), held and tried again at each poll once `nextAttemptAt` has passed
 * (back-off doubling per attempt), so one payment never holds a cursor back
 * for every other (evm-listener.ts, ton-listener.ts). `observation`: what the
 * listener read (JSON, amounts as decimal strings). `tenantId`: the tenant
 * whose COLLECTIONS wallet it paid, on TON (each (tenant, wallet) is read on
 * its own, so one transaction can be held once per tenant); '' on EVM. On
 * EVM a reorg orphaning its block drops it, and `blockHash` (its block's hash
 * when read) is remembered again before each retry.
 */
export const heldPayments = sqliteTable(
  "held_payments",
  {
    chain: text("chain", { enum: CHAINS }).notNull(),
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    kind: text("kind", { enum: ["payment", "failed"] }).notNull(),
    tenantId: text("tenant_id").notNull().default(""),
    blockNumber: integer("block_number").notNull(),
    blockHash: text("block_hash"),
    observation: text("observation").notNull(),
    attempts: integer("attempts").notNull(),
    lastError: text("last_error").notNull(),
    nextAttemptAt: timestamp("next_attempt_at").notNull(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chain, t.txHash, t.logIndex, t.kind, t.tenantId] }),
    index("held_payments_due_idx").on(t.chain, t.tenantId, t.nextAttemptAt),
    index("held_payments_block_idx").on(t.chain, t.blockNumber),
  ],
);

/**
 * A sandbox tenant's ledger of a simulated chain (DECISIONS.md "Modes": one
 * per tenant and chain), registered when a sandbox helper first writes to it.
 * It holds the settlement listener's cursor for that ledger, and `pollAfter`:
 * a helper's write makes the ledger due at once, a poll puts it an hour out,
 * so the cron job polls the ledgers with something new (and each quiet one
 * hourly) through one index range, a bounded number per tick.
 */
export const sandboxLedgers = sqliteTable(
  "sandbox_ledgers",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    chain: text("chain", { enum: CHAINS }).notNull(),
    lastBlock: integer("last_block").notNull(),
    pollAfter: timestamp("poll_after").notNull(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.chain] }), index("sandbox_ledgers_poll_idx").on(t.pollAfter)],
);
