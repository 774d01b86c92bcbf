import { and, eq, isNull, sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { conflict, notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import { tenantClock } from "../tenants/tenant-context.ts";
import type { VerbDeps } from "../verbs.ts";
import type { DeliveryRecord } from "./delivery-history.ts";

/**
 * A `webhook.test` event sent by hand to one endpoint
 * (`POST /v1/webhooks/:id/test`), so a merchant sees a delivery, its
 * signature headers and its attempts before any loan exists. The event is
 * recorded in the outbox like any other (so `GET /v1/events` and the
 * receiver's `webhook-id` agree) but already marked relayed, so the relay
 * neither sends it to the tenant's other endpoints nor makes a notification
 * or e-mail of it; its one delivery is inserted in the same batch, only if
 * the endpoint is still live, and sent like any delivery (3 attempts; a
 * failure raises no `webhook.delivery_failed`). Its first attempt goes out
 * even to an endpoint paused for timing out (send-attempt.ts), so one test
 * event is on its way to an endpoint at a time: another is 409 until the
 * first attempt of the last one (sent within TEST_IN_FLIGHT_WINDOW_MS) has
 * finished.
 *
 * @example await sendTestEvent({ db, queue, clock }, { tenant, endpointId, now }) // { eventType: "webhook.test", status: "PENDING", attempts: [], … }
 */
/** How far back a test event still without its first attempt counts as on its way (a lost message: the recovery pass sends it). */
export const TEST_IN_FLIGHT_WINDOW_MS = 2 * 60_000;

export async function sendTestEvent(
  { db, queue, clock }: Pick<VerbDeps, "db" | "queue" | "clock">,
  input: { tenant: { id: string; clockOffsetMs: number }; mode?: TenantMode; endpointId: string },
): Promise<DeliveryRecord> {
  const [endpoint] = await db
    .select({ id: webhookEndpoints.id, url: webhookEndpoints.url, mode: webhookEndpoints.mode })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.id, input.endpointId),
        eq(webhookEndpoints.tenantId, input.tenant.id),
        isNull(webhookEndpoints.deletedAt),
        input.mode ? eq(webhookEndpoints.mode, input.mode) : undefined,
      ),
    )
    .limit(1);
  if (!endpoint) throw notFound("Webhook endpoint");

  // The event on the tenant's clock of the endpoint's mode, as every event's createdAt (the sandbox clock in sandbox).
  const now = tenantClock(clock, input.tenant, endpoint.mode).now();
  // Its delivery on the system clock, as the relay's and redelivery's: the recovery pass (stalled-deliveries.ts) and the
  // consumer time deliveries by it. On a sandbox clock moved ahead, a lost message would not be sent again until real time
  // caught up with it (an audit: 8 days), and the history would mix the two clocks.
  const at = clock.now();
  const envelope: EventEnvelope = {
    id: newId(),
    type: "webhook.test",
    createdAt: now.toISOString(),
    tenantId: input.tenant.id,
    mode: endpoint.mode,
    data: { test: true, endpoint: { id: endpoint.id, url: endpoint.url } },
    program: null,
    channel: null,
  };
  const live = sql`EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${webhookEndpoints.id} = ${endpoint.id} AND ${webhookEndpoints.deletedAt} IS NULL)`;
  // One test event on its way to an endpoint at a time: its first attempt goes out even while the endpoint is paused
  // (send-attempt.ts), and repeated ones would each hold a request slot of the queue every tenant shares.
  const onItsWay = sql`EXISTS (SELECT 1 FROM ${webhookDeliveries} WHERE ${webhookDeliveries.endpointId} = ${endpoint.id}
    AND ${webhookDeliveries.createdAt} > ${at.getTime() - TEST_IN_FLIGHT_WINDOW_MS} AND ${webhookDeliveries.eventType} = 'webhook.test'
    AND ${webhookDeliveries.status} = 'PENDING' AND ${webhookDeliveries.attemptCount} = 0)`;
  const delivery = {
    id: newId(),
    tenantId: input.tenant.id,
    eventId: envelope.id,
    eventType: envelope.type,
    endpointId: endpoint.id,
    redeliveryOf: null,
    mode: endpoint.mode,
    status: "PENDING" as const,
    attemptCount: 0,
    // Due now: should the message below be lost, the stalled-delivery sweep sends it.
    nextAttemptAt: at,
    createdAt: at,
    updatedAt: at,
  };
  const [inserted] = await db.batch([
    insertIf(
      db,
      events,
      {
        id: envelope.id,
        seq: sql`(SELECT COALESCE(MAX(${events.seq}), 0) + 1 FROM ${events})`,
        tenantId: envelope.tenantId,
        type: envelope.type,
        mode: envelope.mode,
        loanId: null,
        envelope,
        createdAt: now,
        // Already relayed: the relay must not fan it out to other endpoints nor notify.
        relayedAt: at,
      },
      sql`${live} AND NOT ${onItsWay}`,
    ).returning({ id: events.id }),
    insertIf(db, webhookDeliveries, delivery, sql`EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${envelope.id})`),
  ]);
  if (inserted.length === 0) {
    const [busy] = await db
      .select({ yes: sql<number>`1` })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, endpoint.id), onItsWay));
    if (busy) throw conflict("A test event to this endpoint is on its way; send another once its first attempt has finished (GET /v1/webhooks/deliveries)");
    throw notFound("Webhook endpoint");
  }

  await queue.send({ kind: "delivery", deliveryId: delivery.id, attempt: 1 });
  return { ...delivery, url: endpoint.url, attempts: [] };
}
