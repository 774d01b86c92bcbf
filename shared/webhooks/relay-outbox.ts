import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { chunk } from "../../db/chunks.ts";
import { jsonRows, selectJsonRows } from "../../db/json-rows.ts";
import { placeholderAs, preparedReads } from "../../db/prepared-batch.ts";
import { preparedStatement } from "../../db/prepared-statements.ts";
import type { Db } from "../../db/create-db.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { users } from "../../db/schema/users.ts";
import { notifications, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import { describeEvent } from "../notifications/describe-event.ts";
import { OWNER_EMAIL_NOT_VERIFIED } from "../notifications/send-notification-email.ts";
import type { VerbDeps } from "../verbs.ts";
import { bundledAttempts, type DeliveryMessage } from "./messages.ts";

/**
 * Events relayed per page: the claim and the read-back list a page's ids in
 * one `IN (…)` each, so a page stays within `IDS_PER_LIST` (D1's 100
 * parameters per statement). The cron relay loops until the outbox is drained.
 */
export const RELAY_PAGE = 50;

type Endpoint = { id: string; tenantId: string; mode: TenantMode; events: string[] };

/**
 * The endpoints an event goes to: the tenant's live endpoints of the event's
 * mode (DECISIONS.md "Modes": a sandbox endpoint never receives a live loan)
 * subscribed to its type (or "*"). A `webhook.delivery_failed` never goes to the endpoint
 * it is about (SPEC.md "Events": it tells the merchant's other endpoints).
 */
export function targetsOf(envelope: EventEnvelope, endpoints: Endpoint[]): Endpoint[] {
  const about = envelope.type === "webhook.delivery_failed" ? (envelope.data as { delivery?: { endpointId?: string } }).delivery?.endpointId : undefined;
  return endpoints.filter(
    (e) => e.tenantId === envelope.tenantId && e.mode === envelope.mode && e.id !== about && (e.events.includes("*") || e.events.includes(envelope.type)),
  );
}

/**
 * The next page of unrelayed events in outbox order: all tenants' (the cron
 * relay, through `events_unrelayed_idx`, whose NULLs come first) or one
 * tenant's (the api's relay after a write, through the partial
 * `events_unrelayed_tenant_idx`). Either range holds only unrelayed events,
 * however long the relayed history grows.
 */
export function unrelayedEventsQuery(db: Db, tenantId?: string) {
  return db
    .select()
    .from(events)
    .where(and(isNull(events.relayedAt), tenantId ? eq(events.tenantId, tenantId) : undefined))
    .orderBy(asc(events.seq))
    .limit(RELAY_PAGE);
}

/** The first deliveries of claimed events, still unsent (by `webhook_deliveries_event_idx`). */
export function claimedDeliveriesQuery(db: Db, eventIds: string[]) {
  return db
    .select({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId })
    .from(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.eventId, eventIds), eq(webhookDeliveries.status, "PENDING"), eq(webhookDeliveries.attemptCount, 0)));
}

/** The owner e-mails of claimed events, still unsent (by the unique event id of notifications). */
export function claimedMailsQuery(db: Db, eventIds: string[]) {
  return db
    .select({ id: notifications.id, eventId: notifications.eventId })
    .from(notifications)
    .where(and(inArray(notifications.eventId, eventIds), eq(notifications.emailStatus, "PENDING"), eq(notifications.emailAttempts, 0)));
}

/**
 * Moves events from the outbox to the deliveries Queue (the cron worker every
 * tick, and the api worker right after a request commits):
 * 1. for each event, a delivery per subscribed endpoint and the tenant's
 *    notification (with the owner e-mail to send): idempotent inserts;
 * 2. claim the events (`relayed_at`, only where still null), so of several
 *    overlapping relays exactly one messages each event;
 * 3. message the claimed events' deliveries and e-mails.
 * A crash after the claim leaves deliveries (and e-mails) PENDING with no
 * message; the recovery pass of the cron tick re-sends them once their
 * lease (the delivery timeout plus a margin) has run out.
 */
export async function relayOutbox(
  deps: Pick<VerbDeps, "db" | "queue">,
  input: { now: Date; tenantId?: string },
): Promise<{ events: number; messages: number }> {
  const { events, messages } = await relayPage(deps, input);
  return { events, messages };
}

/**
 * A page's reads, one batch on one snapshot: the unrelayed events (all
 * tenants', or one tenant's), the live endpoints of their tenants and those
 * tenants' owners (oldest first). For all tenants, each statement reads the
 * page's tenants again (the same rows: one snapshot).
 */
export function relayPageQueries(db: Db, tenantId?: string) {
  const ofTenants = (column: typeof webhookEndpoints.tenantId | typeof users.tenantId) =>
    tenantId
      ? eq(column, tenantId)
      : inArray(column, db.select({ tenantId: events.tenantId }).from(events).where(isNull(events.relayedAt)).orderBy(asc(events.seq)).limit(RELAY_PAGE));
  return [
    unrelayedEventsQuery(db, tenantId),
    db
      .select({ id: webhookEndpoints.id, tenantId: webhookEndpoints.tenantId, mode: webhookEndpoints.mode, events: webhookEndpoints.events })
      .from(webhookEndpoints)
      .where(and(ofTenants(webhookEndpoints.tenantId), isNull(webhookEndpoints.deletedAt))),
    db
      .select({ tenantId: users.tenantId, email: users.email, verified: users.emailVerifiedAt })
      .from(users)
      .where(and(ofTenants(users.tenantId), eq(users.role, "OWNER")))
      .orderBy(asc(users.createdAt)),
  ] as const;
}

/**
 * A page's notifications and deliveries, each insert one statement (rows as
 * one JSON parameter, db/json-rows.ts) built once per database; idempotent.
 * Deliveries go 500 to a statement (a page of 50 events to 10 endpoints),
 * about 150 KB of JSON, well within D1's 1 MB for a value.
 */
const insertNotifications = preparedStatement<{ rows: string }>((db, p) =>
  db
    .insert(notifications)
    .select(selectJsonRows(notifications, p("rows")))
    .onConflictDoNothing({ target: notifications.eventId }),
);
const insertDeliveries = preparedStatement<{ rows: string }>((db, p) =>
  db
    .insert(webhookDeliveries)
    .select(selectJsonRows(webhookDeliveries, p("rows")))
    .onConflictDoNothing(),
);
const DELIVERIES_PER_INSERT = 500;

/** The page's reads, built once per database (db/prepared-batch.ts). */
const tenantPageReads = preparedReads((db) => relayPageQueries(db, placeholderAs<string>("tenantId")));
const allPageReads = preparedReads((db) => relayPageQueries(db));

/**
 * One page of `relayOutbox` in two D1 round trips (and one Queue send): the
 * page's reads in one batch, then one batch that writes its deliveries and
 * notifications, claims its events and reads back the unsent deliveries and
 * e-mails of the page. The batch is one transaction, so what it reads back
 * is what its claim saw; only the events this claim took are messaged.
 * `read`: the unrelayed events it found (short of a page: the outbox was
 * drained when it read).
 */
async function relayPage(
  { db, queue }: Pick<VerbDeps, "db" | "queue">,
  input: { now: Date; tenantId?: string },
): Promise<{ events: number; messages: number; read: number }> {
  const [pending, endpoints, owners] = input.tenantId ? await tenantPageReads(db, { tenantId: input.tenantId }) : await allPageReads(db, {});
  const read = pending.length;
  if (read === 0) return { events: 0, messages: 0, read };
  const ownerOf = new Map<string, { email: string; verified: boolean }>();
  // The oldest OWNER whose address is verified, else the oldest OWNER (its e-mails SKIPPED until it verifies).
  for (const o of owners) {
    const seen = ownerOf.get(o.tenantId);
    if (!seen || (!seen.verified && o.verified !== null)) ownerOf.set(o.tenantId, { email: o.email, verified: o.verified !== null });
  }

  const deliveryRows = pending.flatMap((e) =>
    // The mode from the column: envelopes stored before modes lack it.
    targetsOf({ ...e.envelope, mode: e.mode }, endpoints).map((endpoint) => ({
      id: newId(),
      tenantId: e.tenantId,
      eventId: e.id,
      eventType: e.type,
      endpointId: endpoint.id,
      redeliveryOf: null,
      mode: endpoint.mode,
      status: "PENDING" as const,
      attemptCount: 0,
      nextAttemptAt: input.now,
      createdAt: input.now,
      updatedAt: input.now,
    })),
  );
  const notificationRows = pending.map((e) => {
    const { title, body } = describeEvent(e.envelope);
    const owner = ownerOf.get(e.tenantId);
    return {
      id: newId(),
      tenantId: e.tenantId,
      eventId: e.id,
      eventType: e.type,
      mode: e.mode,
      title,
      body,
      readAt: null,
      emailTo: owner?.email ?? null,
      ...emailFor(owner, input.now),
      emailAttempts: 0,
      emailSentAt: null,
      eventSeq: e.seq,
      // The event's own time (the tenant's clock), so notifications and events sort alike.
      createdAt: e.createdAt,
    };
  });
  const ids = pending.map((e) => e.id);
  const results = (await db.batch([
    insertNotifications(db, { rows: jsonRows(notifications, notificationRows) }),
    ...chunk(deliveryRows, DELIVERIES_PER_INSERT).map((rows) => insertDeliveries(db, { rows: jsonRows(webhookDeliveries, rows) })),
    // Claim: only the relay whose update sets relayed_at messages the event.
    db
      .update(events)
      .set({ relayedAt: input.now })
      .where(and(inArray(events.id, ids), isNull(events.relayedAt)))
      .returning({ id: events.id }),
    claimedDeliveriesQuery(db, ids),
    claimedMailsQuery(db, ids),
  ] as unknown as [never, ...never[]])) as unknown[];
  const [claimedRows, deliveryRowsRead, mailRows] = results.slice(-3) as [
    { id: string }[],
    { id: string; eventId: string }[],
    { id: string; eventId: string }[],
  ];
  if (claimedRows.length === 0) return { events: 0, messages: 0, read };

  // The unsent deliveries and e-mails of the events this claim took (another relay's are its to message).
  const claimed = new Set(claimedRows.map((r) => r.id));
  const position = new Map(pending.map((e, i) => [e.id, i]));
  const inOutboxOrder = (a: { eventId: string }, b: { eventId: string }) => position.get(a.eventId)! - position.get(b.eventId)!;
  // Rows come in index order (by event id); messages go in outbox order. The sort is stable,
  // so an event's deliveries keep their order.
  const deliveries = deliveryRowsRead.filter((d) => claimed.has(d.eventId)).sort(inOutboxOrder);
  const mails = mailRows.filter((n) => claimed.has(n.eventId)).sort(inOutboxOrder);
  // First attempts bundled (messages.ts), e-mails one per message.
  const messages: { body: DeliveryMessage }[] = [
    ...bundledAttempts(deliveries.map((d) => ({ kind: "delivery" as const, deliveryId: d.id, attempt: 1 }))),
    ...mails.map((n) => ({ body: { kind: "email" as const, notificationId: n.id } })),
  ];
  // Queues take at most 100 messages per batch.
  for (const batch of chunk(messages, 100)) await queue.sendBatch(batch);
  return { events: claimed.size, messages: messages.length, read };
}

/**
 * A new notification's e-mail: to the owner once their address is verified;
 * SKIPPED, with the reason, while it is not (or when there is no owner).
 * Skipped e-mails are not sent later: verification starts the e-mail, it
 * does not replay the past.
 */
function emailFor(owner: { verified: boolean } | undefined, now: Date) {
  if (!owner) return { emailStatus: "SKIPPED" as const, emailError: "no owner e-mail", emailNextAttemptAt: null };
  if (!owner.verified) return { emailStatus: "SKIPPED" as const, emailError: OWNER_EMAIL_NOT_VERIFIED, emailNextAttemptAt: null };
  return { emailStatus: "PENDING" as const, emailError: null, emailNextAttemptAt: now };
}

/**
 * Relays page after page until one is short (the outbox, or `tenantId`'s
 * part of it, held less than a page when it was read: no empty read to end
 * on) or `maxPages` pages went out: for the cron tick (all tenants), and for
 * the relay after a write (shared/webhooks/relay-after-commit.ts). A page
 * whose events another relay claimed first does not end it. `more`: it
 * stopped at the cap (the cron continues it).
 */
export async function drainOutbox(deps: Pick<VerbDeps, "db" | "queue">, { now, maxPages = 20, tenantId }: { now: Date; maxPages?: number; tenantId?: string }) {
  const total = { events: 0, messages: 0, more: false };
  for (let i = 0; i < maxPages; i++) {
    const r = await relayPage(deps, { now, tenantId });
    total.events += r.events;
    total.messages += r.messages;
    if (r.read < RELAY_PAGE) return total;
  }
  total.more = true;
  return total;
}
