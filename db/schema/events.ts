import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { json, timestamp } from "./columns.ts";
import { EVENT_TYPES } from "../../shared/domain/vocabularies.ts";

/** DECISIONS.md "Webhooks": `{ id, type, createdAt, tenantId, data, program, channel }`. */
export type EventEnvelope = {
  id: string;
  type: (typeof EVENT_TYPES)[number];
  createdAt: string;
  tenantId: string;
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
     * in which their changes committed, even within one millisecond.
     */
    seq: integer("seq").notNull().unique(),
    tenantId: tenantIdColumn(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    loanId: text("loan_id"),
    envelope: json<EventEnvelope>("envelope").notNull(),
    createdAt: timestamp("created_at").notNull(),
    relayedAt: timestamp("relayed_at"),
  },
  (t) => [
    index("events_tenant_seq_idx").on(t.tenantId, t.seq),
    index("events_tenant_type_idx").on(t.tenantId, t.type, t.seq),
    index("events_tenant_loan_idx").on(t.tenantId, t.loanId, t.seq),
    index("events_unrelayed_idx").on(t.relayedAt, t.seq),
  ],
);
