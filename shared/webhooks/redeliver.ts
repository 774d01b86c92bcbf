import { sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { conflict } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import { getDelivery, type DeliveryRecord } from "./delivery-history.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Sends a finished delivery's event to its endpoint again, by hand
 * (`POST /v1/webhooks/deliveries/:id/redeliver`): a new delivery row
 * (`redeliveryOf` the given one) with its own 3 attempts, for the same event,
 * so receivers see the same `webhook-id` and deduplicate on it. Only a
 * finished delivery (SUCCEEDED or FAILED; finished ones never go back) is
 * redelivered. The insert is conditional on the endpoint still being live,
 * so a concurrent delete cannot slip a delivery in after it, and on no
 * delivery of the event to the endpoint being in progress: one redelivery at
 * a time (an audit sent three at once, each with its 3 attempts, into the
 * queue every tenant shares).
 * `nextAttemptAt` is now: should the message below be lost, the stalled
 * delivery sweep sends it.
 *
 * @example await redeliver({ db, queue }, { tenantId, deliveryId, now }) // { id: <new>, redeliveryOf: deliveryId, status: "PENDING", attemptCount: 0, attempts: [], … }
 */
export async function redeliver(
  { db, queue }: Pick<VerbDeps, "db" | "queue">,
  input: { tenantId: string; mode?: TenantMode; deliveryId: string; now: Date },
): Promise<DeliveryRecord> {
  const original = await getDelivery({ db }, { tenantId: input.tenantId, mode: input.mode, id: input.deliveryId });
  if (original.status === "PENDING") throw conflict("The delivery is still in progress; redeliver it once it has SUCCEEDED or FAILED");
  if (original.endpointDeletedAt) throw conflict("The delivery's webhook endpoint was deleted");

  const row = {
    id: newId(),
    tenantId: original.tenantId,
    eventId: original.eventId,
    eventType: original.eventType,
    endpointId: original.endpointId,
    redeliveryOf: original.id,
    mode: original.mode,
    status: "PENDING" as const,
    attemptCount: 0,
    nextAttemptAt: input.now,
    createdAt: input.now,
    updatedAt: input.now,
  };
  const inProgress = sql`EXISTS (SELECT 1 FROM webhook_deliveries AS d WHERE d.event_id = ${original.eventId} AND d.endpoint_id = ${original.endpointId} AND d.status = 'PENDING')`;
  const inserted = await insertIf(
    db,
    webhookDeliveries,
    row,
    sql`EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${webhookEndpoints.id} = ${original.endpointId} AND ${webhookEndpoints.deletedAt} IS NULL) AND NOT ${inProgress}`,
  ).returning({ id: webhookDeliveries.id });
  if (inserted.length === 0) {
    const [pending] = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        sql`${webhookDeliveries.eventId} = ${original.eventId} AND ${webhookDeliveries.endpointId} = ${original.endpointId} AND ${webhookDeliveries.status} = 'PENDING'`,
      )
      .limit(1);
    if (pending) throw conflict(`A delivery of this event to this endpoint is in progress (${pending.id}); redeliver once it has finished`);
    throw conflict("The delivery's webhook endpoint was deleted");
  }

  await queue.send({ kind: "delivery", deliveryId: row.id, attempt: 1 });
  return { ...row, url: original.url, attempts: [] };
}
