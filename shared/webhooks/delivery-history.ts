import { and, asc, eq, getTableColumns, inArray } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import { mergedPageOf, newestFirst, pageOf } from "../../db/pagination.ts";
import type { DELIVERY_STATUSES } from "../domain/vocabularies.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { events } from "../../db/schema/events.ts";
import { notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { EventType } from "../events/loan-events.ts";
import type { VerbDeps } from "../verbs.ts";

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryAttempt = {
  attempt: number;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number | null;
  responseStatus: number | null;
  error: string | null;
  succeeded: boolean | null;
};

/** A delivery with its endpoint's URL and every attempt so far, in order. */
export type DeliveryRecord = typeof webhookDeliveries.$inferSelect & { url: string; attempts: DeliveryAttempt[] };

export type ListDeliveriesInput = {
  tenantId: string;
  /** Only deliveries to endpoints of this mode (an API key's own); none: both (a dashboard session's). */
  mode?: TenantMode;
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: EventType;
  /** Only deliveries of this loan's events (a loan's page); another tenant's loan matches nothing. */
  loanId?: string;
  limit: number;
  cursor?: string;
};

/** The attempts of `deliveryIds`, in one query, grouped by delivery. */
async function attemptsOf(db: Db, deliveryIds: string[]): Promise<Map<string, DeliveryAttempt[]>> {
  const byDelivery = new Map<string, DeliveryAttempt[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await db
    .select({
      deliveryId: webhookAttempts.deliveryId,
      attempt: webhookAttempts.attempt,
      startedAt: webhookAttempts.startedAt,
      finishedAt: webhookAttempts.finishedAt,
      durationMs: webhookAttempts.durationMs,
      responseStatus: webhookAttempts.responseStatus,
      error: webhookAttempts.error,
      succeeded: webhookAttempts.succeeded,
    })
    .from(webhookAttempts)
    .where(inArray(webhookAttempts.deliveryId, deliveryIds))
    .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt));
  for (const { deliveryId, ...attempt } of rows) byDelivery.get(deliveryId)?.push(attempt);
  return byDelivery;
}

/**
 * A page of `listDeliveries` (one more row than the page, to know if there
 * is a next), each with its endpoint's URL, of one mode or (`mode`
 * undefined) both. Each filter reads its own range, never the mode's whole
 * history; the terms another index should serve are compared beside it
 * (`+`, which SQLite never reads through an index), so no index that matches
 * as many equality terms can tie and win:
 * - a loan's: its events (by loan), then their deliveries (by event);
 * - an endpoint's: (endpoint_id, created_at) (migration 0030);
 * - a status's, an event type's: (tenant_id, mode, status | event_type,
 *   created_at) (migrations 0028, 0030); both: FAILED or PENDING through the
 *   status (few deliveries are), SUCCEEDED through the type;
 * - otherwise (tenant_id, mode, created_at): a delivery carries its
 *   endpoint's mode (migration 0028).
 * Plans tested in shared/loans/history-plans.test.ts.
 */
export function deliveriesPageQuery(db: Db, input: Omit<ListDeliveriesInput, "mode"> & { mode?: TenantMode }) {
  const page = newestFirst(webhookDeliveries, input.cursor);
  const byLoan = input.loanId !== undefined;
  const byEndpoint = !byLoan && input.endpointId !== undefined;
  const beside = byLoan || byEndpoint;
  // Both a status and a type: the rarer one's range. FAILED and PENDING deliveries are few (most succeed), so the status's; SUCCEEDED, the type's.
  const byTypeFirst = input.eventType !== undefined && input.status === "SUCCEEDED";
  return db
    .select({ ...getTableColumns(webhookDeliveries), url: webhookEndpoints.url })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(
      and(
        equalsTerm(webhookDeliveries.tenantId, input.tenantId, beside),
        equalsTerm(webhookDeliveries.mode, input.mode, beside),
        equalsTerm(webhookDeliveries.endpointId, input.endpointId, byLoan),
        equalsTerm(webhookDeliveries.status, input.status, beside || byTypeFirst),
        equalsTerm(webhookDeliveries.eventType, input.eventType, beside || (input.status !== undefined && !byTypeFirst)),
        input.loanId
          ? inArray(
              webhookDeliveries.eventId,
              db
                .select({ id: events.id })
                .from(events)
                .where(and(eq(events.tenantId, input.tenantId), eq(events.loanId, input.loanId))),
            )
          : undefined,
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
}

/**
 * The tenant's deliveries, newest first (keyset pagination,
 * `deliveriesPageQuery`), each with its endpoint's URL (deleted endpoints
 * included: history stays) and its attempts, loaded for the whole page in a
 * second query. Both modes (a dashboard session without `mode`, unless a
 * loan or an endpoint, each of one mode, narrows it): each mode's page, read
 * in one batch, merged. Another tenant's `endpointId` simply matches
 * nothing.
 */
export async function listDeliveries({ db }: Pick<VerbDeps, "db">, input: ListDeliveriesInput): Promise<{ data: DeliveryRecord[]; nextCursor: string | null }> {
  const { data, nextCursor } =
    input.mode !== undefined || input.loanId !== undefined || input.endpointId !== undefined
      ? pageOf(await deliveriesPageQuery(db, input), input.limit)
      : mergedPageOf(
          await db.batch([deliveriesPageQuery(db, { ...input, mode: "sandbox" }), deliveriesPageQuery(db, { ...input, mode: "live" })]),
          input.limit,
        );
  const attempts = await attemptsOf(
    db,
    data.map((d) => d.id),
  );
  return { data: data.map((d) => ({ ...d, attempts: attempts.get(d.id) ?? [] })), nextCursor };
}

/** One delivery of the tenant with its attempts; another tenant's (or none): not found. */
export async function getDelivery(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode?: TenantMode; id: string },
): Promise<DeliveryRecord & { endpointDeletedAt: Date | null }> {
  if (!isUuid(input.id)) throw notFound("Webhook delivery");
  const [row] = await db
    .select({ ...getTableColumns(webhookDeliveries), url: webhookEndpoints.url, endpointDeletedAt: webhookEndpoints.deletedAt })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(
      and(eq(webhookDeliveries.id, input.id), eq(webhookDeliveries.tenantId, input.tenantId), input.mode ? eq(webhookDeliveries.mode, input.mode) : undefined),
    )
    .limit(1);
  if (!row) throw notFound("Webhook delivery");
  const attempts = await attemptsOf(db, [row.id]);
  return { ...row, attempts: attempts.get(row.id) ?? [] };
}
