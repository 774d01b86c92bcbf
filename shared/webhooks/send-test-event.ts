import { and, eq, isNull, sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { notFound } from "../domain/errors.ts";
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
 * failure raises no `webhook.delivery_failed`).
 *
 * @example await sendTestEvent({ db, queue, clock }, { tenant, endpointId, now }) // { eventType: "webhook.test", status: "PENDING", attempts: [], … }
 */
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
      live,
    ).returning({ id: events.id }),
    insertIf(db, webhookDeliveries, delivery, sql`EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${envelope.id})`),
  ]);
  if (inserted.length === 0) throw notFound("Webhook endpoint");

  await queue.send({ kind: "delivery", deliveryId: delivery.id, attempt: 1 });
  return { ...delivery, url: endpoint.url, attempts: [] };
}
