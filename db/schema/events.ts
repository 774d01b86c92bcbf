import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { json, timestamp } from "./columns.ts";
import { EVENT_TYPES, TENANT_MODES } from "../../shared/domain/vocabularies.ts";

/** DECISIONS.md "Webhooks": `{ id, type, createdAt, tenantId, mode, data, program, channel }`. */
export type EventEnvelope = {
  id: string;
  type: (typeof EVENT_TYPES)[number];
  createdAt: string;
  tenantId: string;
  /** The mode of what caused the event (its loan's; DECISIONS.md "Modes"). Envelopes stored before it existed lack it: read the column. */
  mode: (typeof TENANT_MODES)[number];
  data: Record<string, unknown>;
  program: string | null;
  channel: string | null;
};

/**
 * The durable outbox: written in the same batch as the state change that
 * causes the event; the relay (webhooks issue) sets `relayed_at`.
 */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    /**
     * The outbox order: one more than the highest so far, assigned inside the
     * insert (SQLite serializes writes), so events of one loan keep the order
     * in which their changes committed, even within one millisecond. Per
     * database: cursors and the relay compare it only within one tenant's
     * events and one database, so each shard keeps its own (README "Past one D1").
     */
    seq: integer("seq").notNull().unique(),
    tenantId: tenantIdColumn(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    loanId: text("loan_id"),
    envelope: json<EventEnvelope>("envelope").notNull(),
    createdAt: timestamp("created_at").notNull(),
    relayedAt: timestamp("relayed_at"),
  },
  (t) => [
    index("events_tenant_seq_idx").on(t.tenantId, t.seq),
    index("events_tenant_mode_seq_idx").on(t.tenantId, t.mode, t.seq),
    // The events of a type in a mode (migration 0029).
    index("events_tenant_mode_type_idx").on(t.tenantId, t.mode, t.type, t.seq),
    index("events_tenant_loan_idx").on(t.tenantId, t.loanId, t.seq),
    // The cron relay's unrelayed events (NULLs first), and the retention job's range of events relayed long ago.
    index("events_unrelayed_idx").on(t.relayedAt, t.seq),
    // A tenant's unrelayed events only (migration 0022): the api's relay after a write.
    index("events_unrelayed_tenant_idx").on(t.tenantId, t.seq).where(sql`relayed_at IS NULL`),
  ],
);
