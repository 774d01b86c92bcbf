import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { bool, json, timestamp } from "./columns.ts";
import { events } from "./events.ts";
import { tenantIdColumn } from "./tenant-ref.ts";
import { DELIVERY_STATUSES, EMAIL_STATUSES, EVENT_TYPES, TENANT_MODES } from "../../shared/domain/vocabularies.ts";

/** A merchant's webhook endpoint. The secret signs deliveries, so it is encrypted, not hashed. */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    url: text("url").notNull(),
    /** Event types, or `["*"]` for all. */
    events: json<string[]>("events").notNull(),
    /** The mode whose events it receives (DECISIONS.md "Modes"). */
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    secretCiphertext: text("secret_ciphertext").notNull(),
    /** The secret's first characters, to tell endpoints apart in lists. */
    secretPrefix: text("secret_prefix").notNull(),
    createdAt: timestamp("created_at").notNull(),
    deletedAt: timestamp("deleted_at"),
    /** Attempts in a row that got no answer within the timeout (migration 0046); any answer resets it. */
    timeoutsInARow: integer("timeouts_in_a_row").notNull().default(0),
    /** Until when its attempts wait, unsent (unix ms; shared/webhooks/endpoint-pause.ts); null: not paused. */
    pausedUntil: integer("paused_until"),
    /** When it last answered anything (unix ms, written at most once a delivery timeout): a flaky endpoint is not paused. */
    answeredAt: integer("answered_at"),
  },
  (t) => [index("webhook_endpoints_tenant_idx").on(t.tenantId, t.createdAt, t.id)],
);

/** One delivery of one event to one endpoint (automatic: one per pair; manual redeliveries add rows). */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id),
    eventType: text("event_type", { enum: EVENT_TYPES }).notNull(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id),
    redeliveryOf: text("redelivery_of"),
    /** Its endpoint's mode (migration 0028), so a mode's history reads its own rows. */
    mode: text("mode", { enum: TENANT_MODES }).notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId).where(sql`redelivery_of IS NULL`),
    // The history of a mode, and filtered by status (migrations 0025, 0028).
    index("webhook_deliveries_tenant_mode_idx").on(t.tenantId, t.mode, t.createdAt, t.id),
    index("webhook_deliveries_tenant_mode_status_idx").on(t.tenantId, t.mode, t.status, t.createdAt, t.id),
    // An endpoint's deliveries, a mode's of one event type (migration 0030).
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    index("webhook_deliveries_tenant_mode_type_idx").on(t.tenantId, t.mode, t.eventType, t.createdAt, t.id),
    index("webhook_deliveries_event_idx").on(t.eventId),
    // Only PENDING deliveries (migration 0022): the recovery pass's range does not grow with history.
    index("webhook_deliveries_pending_idx").on(t.nextAttemptAt).where(sql`status = 'PENDING'`),
  ],
);

/**
 * One attempt: claimed (inserted) before the request is sent, finished after.
 * The unique (delivery, attempt) makes every attempt happen at most once.
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer("attempt").notNull(),
    startedAt: timestamp("started_at").notNull(),
    finishedAt: timestamp("finished_at"),
    durationMs: integer("duration_ms"),
    responseStatus: integer("response_status"),
    error: text("error"),
    succeeded: bool("succeeded"),
  },
  (t) => [uniqueIndex("webhook_attempts_delivery_attempt_idx").on(t.deliveryId, t.attempt)],
);

/** Every event of a tenant, as its dashboard notification, with its e-mail to the owner. */
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    eventId: text("event_id")
      .notNull()
      .unique()
      .references(() => events.id),
    eventType: text("event_type", { enum: EVENT_TYPES }).notNull(),
    /** The event's mode. */
    mode: text("mode", { enum: TENANT_MODES }).notNull().default("sandbox"),
    title: text("title").notNull(),
    body: text("body").notNull(),
    readAt: timestamp("read_at"),
    emailTo: text("email_to"),
    emailStatus: text("email_status", { enum: EMAIL_STATUSES }).notNull(),
    emailAttempts: integer("email_attempts").notNull().default(0),
    emailError: text("email_error"),
    emailSentAt: timestamp("email_sent_at"),
    /** When the e-mail's next attempt is due (PENDING only); the recovery pass re-sends it a lease after. */
    emailNextAttemptAt: timestamp("email_next_attempt_at"),
    /** Its event's outbox `seq` (migration 0026): lists are newest first by it, as the events are. */
    eventSeq: integer("event_seq").notNull(),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    index("notifications_tenant_seq_idx").on(t.tenantId, t.eventSeq),
    index("notifications_tenant_mode_seq_idx").on(t.tenantId, t.mode, t.eventSeq),
    // Only the unread ones (migration 0026): the unread list and "mark all read" never walk the read ones.
    index("notifications_unread_idx").on(t.tenantId, t.eventSeq).where(sql`read_at IS NULL`),
    // Only PENDING e-mails (migration 0022), for the recovery pass.
    index("notifications_email_pending_idx").on(t.emailNextAttemptAt).where(sql`email_status = 'PENDING'`),
  ],
);

/** Development runs' e-mail: the mail provider of `ENVIRONMENT=development` writes here. */
export const mailbox = sqliteTable(
  "mailbox",
  {
    id: text("id").primaryKey(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    notificationId: text("notification_id"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("mailbox_created_idx").on(t.createdAt)],
);
