import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, units } from "./columns.ts";
import { tenantIdColumn } from "./tenant-ref.ts";

/**
 * A funding jetton transfer the live TON adapter signed, one per reference
 * (`funding:<loanId>`), stored before it is broadcast: a repeat call follows
 * this message to its outcome instead of signing another. At most one `SENT`
 * row per sending wallet (a v5r1 wallet takes only its next seqno).
 */
export const tonTransfers = sqliteTable(
  "ton_transfers",
  {
    reference: text("reference").primaryKey(),
    tenantId: tenantIdColumn(),
    /** The sending DISBURSEMENT wallet, raw `0:…`. */
    wallet: text("wallet").notNull(),
    /** Its USDT jetton wallet (the master's `get_wallet_address`), raw. */
    jettonWallet: text("jetton_wallet").notNull(),
    toAddress: text("to_address").notNull(),
    amount: units("amount_units").notNull(),
    /** The TEP-74 query_id (uint64, decimal), derived from the reference. */
    queryId: text("query_id").notNull(),
    seqno: integer("seqno").notNull(),
    /** Unix seconds after which the wallet refuses the signed message: past it, it can never land. */
    validUntil: integer("valid_until").notNull(),
    /** Hash of the signed external message body (hex): how the wallet's transaction is found. */
    messageHash: text("message_hash").notNull(),
    /**
     * SENT: signed, maybe broadcast, the wallet has not been seen taking it (it holds the wallet's seqno: one a
     * wallet). TAKEN: the wallet's transaction sent it on (its seqno is used, so the wallet is free for the next
     * reference), the jettons are on their way. CONFIRMED: the recipient's jetton wallet credited them. FAILED:
     * nothing moved.
     */
    status: text("status", { enum: ["SENT", "TAKEN", "CONFIRMED", "FAILED"] }).notNull(),
    txHash: text("tx_hash"),
    txLt: text("tx_lt"),
    errorReason: text("error_reason"),
    /**
     * How far the traces of this attempt got (TraceProgress as JSON: the transactions found so far, where the search
     * for the next one goes on); null before the first trace that stopped short. Cleared with each new attempt.
     */
    trace: text("trace"),
    /** When the recipient's jetton wallet credited the jettons (its transaction's time). */
    confirmedAt: timestamp("confirmed_at"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [uniqueIndex("ton_transfers_in_flight_idx").on(t.wallet).where(sql`status = 'SENT'`)],
);

export type TonTransferRow = typeof tonTransfers.$inferSelect;

/** The TON settlement listener's cursor per tenant and COLLECTIONS wallet: the last transaction applied. */
export const tonWalletCursors = sqliteTable(
  "ton_wallet_cursors",
  {
    tenantId: tenantIdColumn(),
    address: text("address").notNull(),
    /** Logical time, decimal (64-bit). */
    lastLt: text("last_lt").notNull(),
    /** Transaction hash, hex. */
    lastHash: text("last_hash").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.address] })],
);

/**
 * A TON COLLECTIONS wallet's listener in a backlog larger than one poll reads
 * (shared/settlement/ton-listener.ts): the (lt, hash) of the oldest
 * transaction each earlier poll read, newest first, as JSON
 * `[{ lt, hash }, …]` (lt decimal, hash hex). No row: no backlog.
 */
export const tonWalletBacklogs = sqliteTable(
  "ton_wallet_backlogs",
  {
    tenantId: tenantIdColumn(),
    address: text("address").notNull(),
    waypoints: text("waypoints").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.address] })],
);

/**
 * Per tenant and TON COLLECTIONS wallet, the time up to which the listener has read every transaction (migration
 * 0048): the start of its last poll that reached the newest one, less TON_READ_LAG_MS. A live TON loan is judged
 * overdue or defaulted as of its tenant's least-read wallet at the latest (shared/sweeps/sweep-loans.ts). No row: never
 * read through, so a failing poll (toncenter down) or a backlog holds the tenant's TON loans back.
 */
export const tonWalletReads = sqliteTable(
  "ton_wallet_reads",
  {
    tenantId: tenantIdColumn(),
    address: text("address").notNull(),
    readThroughAt: timestamp("read_through_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.address] })],
);
