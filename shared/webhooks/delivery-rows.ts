import { eq, inArray } from "drizzle-orm";
import { chunk, IDS_PER_LIST } from "../../db/chunks.ts";
import type { Db } from "../../db/create-db.ts";
import { events } from "../../db/schema/events.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";

/** What an attempt needs of a delivery: the delivery, its endpoint's URL and secret, its event, and the tenant's clock offset. */
const loadColumns = {
  delivery: webhookDeliveries,
  url: webhookEndpoints.url,
  secretCiphertext: webhookEndpoints.secretCiphertext,
  endpointDeleted: webhookEndpoints.deletedAt,
  /** Until when its endpoint is paused for timing out (endpoint-pause.ts), unix ms; null: not paused. */
  endpointPausedUntil: webhookEndpoints.pausedUntil,
  envelope: events.envelope,
  mode: events.mode,
  /** The tenant's sandbox clock offset: a `webhook.delivery_failed` is stamped on the clock of the event it is about. */
  clockOffsetMs: tenants.clockOffsetMs,
};

/** Several deliveries with their endpoint and event, in one read per 90 ids. */
export async function loadDeliveries(db: Db, ids: string[]): Promise<Map<string, Loaded>> {
  const out = new Map<string, Loaded>();
  for (const part of chunk(ids, IDS_PER_LIST)) {
    const rows = await db
      .select(loadColumns)
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .innerJoin(tenants, eq(tenants.id, webhookDeliveries.tenantId))
      .where(inArray(webhookDeliveries.id, part));
    for (const row of rows) out.set(row.delivery.id, row);
  }
  return out;
}

export async function loadDelivery(db: Db, deliveryId: string) {
  const [row] = await db
    .select(loadColumns)
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(tenants, eq(tenants.id, webhookDeliveries.tenantId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .limit(1);
  return row;
}

export type Loaded = NonNullable<Awaited<ReturnType<typeof loadDelivery>>>;
