import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { users } from "../../db/schema/users.ts";
import { notifications, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { newId } from "../domain/ids.ts";
import { describeEvent } from "../notifications/describe-event.ts";
import type { DeliveryMessage, DeliveryQueue } from "./messages.ts";

/** Events relayed per call; the cron relay loops until the outbox is drained. */
export const RELAY_PAGE = 100;

type Endpoint = { id: string; tenantId: string; events: string[] };

/**
 * The endpoints an event goes to: the tenant's live endpoints subscribed to
 * its type (or "*"). A `webhook.delivery_failed` never goes to the endpoint
 * it is about (SPEC.md "Events": it tells the merchant's other endpoints).
 */
export function targetsOf(envelope: EventEnvelope, endpoints: Endpoint[]): Endpoint[] {
  const about = envelope.type === "webhook.delivery_failed" ? (envelope.data as { delivery?: { endpointId?: string } }).delivery?.endpointId : undefined;
  return endpoints.filter(
    (e) => e.tenantId === envelope.tenantId && e.id !== about && (e.events.includes("*") || e.events.includes(envelope.type)),
  );
}

/**
 * Moves events from the outbox to the deliveries Queue (the cron worker every
 * tick, and the api worker right after a request commits): for each event, a
 * delivery per subscribed endpoint and the tenant's notification (with the
 * owner e-mail to send), then the messages, then `relayed_at`. Every step is
 * idempotent (unique delivery per event and endpoint, unique notification
 * per event, consumers that drop duplicates), so a crash anywhere only leads
 * to the step being done again.
 */
export async function relayOutbox(db: Db, queue: DeliveryQueue, input: { now: Date; tenantId?: string }): Promise<{ events: number; messages: number }> {
  const pending = await db
    .select()
    .from(events)
    .where(and(isNull(events.relayedAt), input.tenantId ? eq(events.tenantId, input.tenantId) : undefined))
    .orderBy(asc(events.seq))
    .limit(RELAY_PAGE);
  if (pending.length === 0) return { events: 0, messages: 0 };
  const tenantIds = [...new Set(pending.map((e) => e.tenantId))];
  const eventIds = pending.map((e) => e.id);

  const [endpoints, owners] = await Promise.all([
    db
      .select({ id: webhookEndpoints.id, tenantId: webhookEndpoints.tenantId, events: webhookEndpoints.events })
      .from(webhookEndpoints)
      .where(and(inArray(webhookEndpoints.tenantId, tenantIds), isNull(webhookEndpoints.deletedAt))),
    db
      .select({ tenantId: users.tenantId, email: users.email })
      .from(users)
      .where(and(inArray(users.tenantId, tenantIds), eq(users.role, "OWNER")))
      .orderBy(asc(users.createdAt)),
  ]);
  const ownerOf = new Map<string, string>();
  for (const o of owners) if (!ownerOf.has(o.tenantId)) ownerOf.set(o.tenantId, o.email);

  const deliveryRows = pending.flatMap((e) =>
    targetsOf(e.envelope, endpoints).map((endpoint) => ({
      id: newId(),
      tenantId: e.tenantId,
      eventId: e.id,
      eventType: e.type,
      endpointId: endpoint.id,
      redeliveryOf: null,
      status: "PENDING" as const,
      attemptCount: 0,
      nextAttemptAt: input.now,
      createdAt: input.now,
      updatedAt: input.now,
    })),
  );
  const notificationRows = pending.map((e) => {
    const { title, body } = describeEvent(e.envelope);
    const emailTo = ownerOf.get(e.tenantId) ?? null;
    return {
      id: newId(),
      tenantId: e.tenantId,
      eventId: e.id,
      eventType: e.type,
      title,
      body,
      readAt: null,
      emailTo,
      emailStatus: emailTo ? ("PENDING" as const) : ("SKIPPED" as const),
      emailAttempts: 0,
      emailError: null,
      emailSentAt: null,
      // The event's own time (the tenant's clock), so notifications and events sort alike.
      createdAt: e.createdAt,
    };
  });
  await db.batch([
    db.insert(notifications).values(notificationRows).onConflictDoNothing({ target: notifications.eventId }),
    ...(deliveryRows.length > 0 ? [db.insert(webhookDeliveries).values(deliveryRows).onConflictDoNothing()] : []),
  ]);

  // Message what is still to do for these events (the rows of an earlier, interrupted relay included).
  const [deliveries, mails] = await Promise.all([
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(inArray(webhookDeliveries.eventId, eventIds), eq(webhookDeliveries.status, "PENDING"), eq(webhookDeliveries.attemptCount, 0))),
    db
      .select({ id: notifications.id })
      .from(notifications)
      .where(and(inArray(notifications.eventId, eventIds), eq(notifications.emailStatus, "PENDING"), eq(notifications.emailAttempts, 0))),
  ]);
  const messages: { body: DeliveryMessage }[] = [
    ...deliveries.map((d) => ({ body: { kind: "delivery" as const, deliveryId: d.id, attempt: 1 } })),
    ...mails.map((n) => ({ body: { kind: "email" as const, notificationId: n.id } })),
  ];
  // Queues take at most 100 messages per batch.
  for (let i = 0; i < messages.length; i += 100) await queue.sendBatch(messages.slice(i, i + 100));
  await db.update(events).set({ relayedAt: input.now }).where(inArray(events.id, eventIds));
  return { events: pending.length, messages: messages.length };
}

/** Relays until the outbox is empty (or `maxPages` pages), for the cron tick. */
export async function drainOutbox(db: Db, queue: DeliveryQueue, now: Date, maxPages = 20) {
  const total = { events: 0, messages: 0 };
  for (let i = 0; i < maxPages; i++) {
    const r = await relayOutbox(db, queue, { now });
    total.events += r.events;
    total.messages += r.messages;
    if (r.events < RELAY_PAGE) break;
  }
  return total;
}
