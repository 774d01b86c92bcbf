import { and, asc, eq, exists, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { sealSecret } from "../crypto/secret-box.ts";
import { conflict, forbidden, notFound, validationError } from "../domain/errors.ts";
import { isUuid, newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import { webhookUrlProblem, type WebhookEnvironment } from "../domain/webhook-urls.ts";
import type { EventType } from "../events/loan-events.ts";
import { loadTenant } from "../tenants/tenant-context.ts";
import { generateWebhookSecret } from "./signing.ts";
import type { VerbDeps } from "../verbs.ts";

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;

/** What an endpoint shows of itself: never the secret or its ciphertext. */
export type WebhookEndpointSummary = Pick<WebhookEndpoint, "id" | "url" | "events" | "mode" | "secretPrefix" | "createdAt" | "pausedUntil">;

/**
 * Endpoints a tenant may hold per mode. Every event goes to each subscribed
 * endpoint, up to 3 attempts of up to 10 s each, through the deliveries queue
 * every tenant shares: before the cap, an audit registered 500 endpoints that
 * never answered on one free sandbox account, and another tenant's webhooks
 * then took minutes to arrive.
 */
export const MAX_WEBHOOK_ENDPOINTS = 10;

/** Characters of the secret kept in the clear to tell endpoints apart (`whsec_` and 6 more). */
export const SECRET_PREFIX_LENGTH = 12;

const summaryColumns = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  events: webhookEndpoints.events,
  mode: webhookEndpoints.mode,
  secretPrefix: webhookEndpoints.secretPrefix,
  createdAt: webhookEndpoints.createdAt,
  pausedUntil: webhookEndpoints.pausedUntil,
};

/**
 * The tenant's live endpoints subscribed to `eventType`, by name or with
 * `"*"`, oldest first. Deleted endpoints get no new deliveries.
 *
 * @example await subscribedEndpoints(db, tenantId, "loan.funded") // [{ id, url, events: ["*"], secretCiphertext, … }]
 */
export async function subscribedEndpoints(db: Db, tenantId: string, eventType: EventType): Promise<WebhookEndpoint[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.tenantId, tenantId),
        isNull(webhookEndpoints.deletedAt),
        sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.events}) WHERE json_each.value IN (${eventType}, '*'))`,
      ),
    )
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

/**
 * Registers an endpoint with a fresh signing secret. The secret is stored
 * only sealed under `secretsKey` (deliveries must sign with it again, so it
 * cannot be hashed); the returned `secret` is the only time it leaves the
 * service. The URL is stored as the parser normalized it, which is the URL
 * that was judged and the one deliveries call.
 *
 * @example const { endpoint, secret } = await createEndpoint({ db }, { tenantId, url: "https://hooks.example.com/svc", events: ["*"], environment: "production", secretsKey, now })
 */
export async function createEndpoint(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode: TenantMode; url: string; events: string[]; environment: WebhookEnvironment; secretsKey: string; now: Date },
): Promise<{ endpoint: WebhookEndpointSummary; secret: string }> {
  const problem = webhookUrlProblem(input.url, input.environment);
  if (problem) throw validationError([`url: ${problem}`]);
  if (input.mode === "live" && !(await loadTenant(db, input.tenantId)).certifiedAt) {
    throw forbidden(
      'Live webhook endpoints are registered after go-live certification (GET /v1/go-live), and this tenant is not certified; register a sandbox endpoint (mode: "sandbox")',
    );
  }
  const secret = generateWebhookSecret();
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    url: new URL(input.url).href,
    events: input.events,
    mode: input.mode,
    secretCiphertext: await sealSecret(secret, input.secretsKey),
    secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH),
    createdAt: input.now,
    deletedAt: null,
  };
  // Conditional on the count as the row is written, so racing registrations cannot pass the cap together.
  const underCap = sql`(SELECT count(*) FROM ${webhookEndpoints} WHERE ${webhookEndpoints.tenantId} = ${input.tenantId} AND ${webhookEndpoints.mode} = ${input.mode} AND ${webhookEndpoints.deletedAt} IS NULL) < ${MAX_WEBHOOK_ENDPOINTS}`;
  const inserted = await insertIf(db, webhookEndpoints, row, underCap).returning({ id: webhookEndpoints.id });
  if (inserted.length === 0) {
    throw conflict(
      `This tenant already has ${MAX_WEBHOOK_ENDPOINTS} ${input.mode} webhook endpoints, the most it may hold; delete one (DELETE /v1/webhooks/:id) before registering another`,
    );
  }
  return {
    endpoint: { id: row.id, url: row.url, events: row.events, mode: row.mode, secretPrefix: row.secretPrefix, createdAt: row.createdAt, pausedUntil: null },
    secret,
  };
}

/** The tenant's live endpoints (of one mode, if given), newest first (keyset pagination), without secrets. */
export async function listEndpoints({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; mode?: TenantMode; limit: number; cursor?: string }) {
  const page = newestFirst(webhookEndpoints, input.cursor);
  const rows: WebhookEndpointSummary[] = await db
    .select(summaryColumns)
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.tenantId, input.tenantId),
        input.mode ? eq(webhookEndpoints.mode, input.mode) : undefined,
        isNull(webhookEndpoints.deletedAt),
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}

/**
 * Soft-deletes an endpoint: its deliveries stay in the history, it gets no
 * new ones, and those still PENDING end FAILED in the same batch, with no
 * further attempt and no `webhook.delivery_failed` (SPEC.md: that event is
 * for an endpoint that failed its attempts, not one the merchant removed).
 * Their queued messages then find them finished and are dropped; an attempt
 * already on its way when the endpoint went is not sent and ends its
 * delivery the same way (send-attempt.ts `ENDPOINT_DELETED`). Conditional on it
 * being live, so deleting twice (or another tenant's endpoint) is not found.
 */
export async function deleteEndpoint({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; mode?: TenantMode; id: string; now: Date }): Promise<void> {
  if (!isUuid(input.id)) throw notFound("Webhook endpoint");
  const [[row]] = await db.batch([
    db
      .update(webhookEndpoints)
      .set({ deletedAt: input.now })
      .where(
        and(
          eq(webhookEndpoints.id, input.id),
          eq(webhookEndpoints.tenantId, input.tenantId),
          // An API key's mode: another mode's endpoint is not found, like another tenant's.
          input.mode ? eq(webhookEndpoints.mode, input.mode) : undefined,
          isNull(webhookEndpoints.deletedAt),
        ),
      )
      .returning({ id: webhookEndpoints.id }),
    // Only if this batch deleted it (the update above, this tenant's): its pending deliveries end now.
    db
      .update(webhookDeliveries)
      .set({ status: "FAILED", nextAttemptAt: null, updatedAt: input.now })
      .where(
        and(
          eq(webhookDeliveries.endpointId, input.id),
          eq(webhookDeliveries.tenantId, input.tenantId),
          eq(webhookDeliveries.status, "PENDING"),
          exists(
            db
              .select({ id: webhookEndpoints.id })
              .from(webhookEndpoints)
              .where(and(eq(webhookEndpoints.id, input.id), eq(webhookEndpoints.deletedAt, input.now))),
          ),
        ),
      ),
  ]);
  if (!row) throw notFound("Webhook endpoint");
}
