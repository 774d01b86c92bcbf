import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES, EVENT_TYPES } from "../../../../shared/domain/vocabularies.ts";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { iso, isoOrNull, ModeQuerySchema, PageQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { MAX_WEBHOOK_URL_LENGTH, webhookUrlProblem } from "../../../../shared/domain/webhook-urls.ts";
import type { DeliveryRecord } from "../../../../shared/webhooks/delivery-history.ts";
import type { WebhookEndpointSummary } from "../../../../shared/webhooks/endpoints.ts";
import { pausedUntil } from "../../../../shared/webhooks/endpoint-pause.ts";

const EventTypeOrAllSchema = z.enum(["*", ...EVENT_TYPES]);

export const WebhookEventsSchema = z
  .array(EventTypeOrAllSchema)
  .min(1)
  .refine((events) => new Set(events).size === events.length, "must not list an event type twice")
  .refine(
    (events) => !events.includes("*") || events.length === 1,
    'must be exactly ["*"] to subscribe to every event type, or a list of event types without "*"',
  )
  .openapi({
    description: `Event types to receive (${EVENT_TYPES.join(", ")}), or exactly \`["*"]\` for all of them.`,
    example: ["loan.funded", "loan.repaid"],
  });

export const CreateWebhookBodySchema = z
  .object({
    url: z
      .string()
      // The environment-independent problems are reported here, with the other fields;
      // the verb applies the deployed environment's stricter rules.
      .superRefine((url, ctx) => {
        const problem = webhookUrlProblem(url, "development");
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .openapi({ example: "https://hooks.merchant.example/svc", description: `At most ${MAX_WEBHOOK_URL_LENGTH} characters.` }),
    events: WebhookEventsSchema,
    mode: z.enum(TENANT_MODES).optional().openapi({
      description:
        "The mode whose events the endpoint receives (DECISIONS.md \"Modes\"). An API key's endpoint is of the key's mode (naming the other: 403); a dashboard session's is sandbox unless it names live.",
    }),
  })
  .openapi("CreateWebhookRequest");

export const WebhookEndpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string().openapi({ description: "The URL as normalized by the URL standard (the one deliveries call)." }),
    events: z.array(z.string()),
    mode: z.enum(TENANT_MODES).openapi({ description: "It receives this mode's events only." }),
    secretPrefix: z.string().openapi({ description: "The secret's first 12 characters, to tell endpoints apart.", example: "whsec_3kT9aB" }),
    createdAt: TimestampSchema,
    pausedUntil: TimestampSchema.nullable().openapi({
      description:
        "Set while the endpoint is paused: after 3 delivery timeouts in a row, with no answer of any kind for 6 timeouts (60 s), its deliveries wait unsent, and uncounted as attempts, until this time (plus up to half the pause again). The pause is 30 s, doubling with each further timeout, at most 10 minutes. Any answer ends it, whatever its status. Each delivery still gets its 3 real attempts. Null when the endpoint is not paused.",
    }),
  })
  .openapi("WebhookEndpoint");

export const CreatedWebhookEndpointSchema = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description:
      "The signing secret (`whsec_…`). Shown in this response only; store it now. `x-svc-signature` is keyed with this whole string; `webhook-signature` (Standard Webhooks) with the base64-decoded part after `whsec_`.",
  }),
}).openapi("CreatedWebhookEndpoint");

/** The endpoint as the API shows it; `pausedUntil` only while the pause lasts at `now` (endpoint-pause.ts). */
export const endpointView = (e: WebhookEndpointSummary, now: Date) => {
  const paused = pausedUntil(e.pausedUntil, now);
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    mode: e.mode,
    secretPrefix: e.secretPrefix,
    createdAt: iso(e.createdAt),
    pausedUntil: paused === null ? null : new Date(paused).toISOString(),
  };
};

const AttemptSchema = z
  .object({
    attempt: z.number().int().openapi({ description: "1 to 3", example: 1 }),
    startedAt: TimestampSchema.openapi({
      description:
        "When the attempt was claimed, before its request went out: the request may wait for one of the consumer's six request slots (at most 1.5 delivery timeouts, then the attempt is deferred and not counted), so `finishedAt` − `startedAt` can exceed `durationMs`.",
    }),
    finishedAt: TimestampSchema.nullable().openapi({ description: "When the endpoint answered, or the request failed; null while the attempt is in flight." }),
    durationMs: z.number().int().nullable().openapi({ description: "The request alone, from when it went out to its answer or failure." }),
    responseStatus: z.number().int().nullable().openapi({ description: "The endpoint's HTTP status; null on a network error or timeout." }),
    error: z.string().nullable().openapi({ example: "HTTP 500" }),
    succeeded: z.boolean().nullable(),
  })
  .openapi("WebhookAttempt");

export const DeliverySchema = z
  .object({
    id: z.uuid().openapi({ description: "The delivery id, sent as `x-svc-delivery`." }),
    eventId: z.uuid().openapi({ description: "The event id, sent as `webhook-id` and as the envelope's `id`: the same on every attempt and redelivery." }),
    eventType: z.enum(EVENT_TYPES),
    endpointId: z.uuid(),
    url: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number().int().openapi({
      description: "Attempts finished so far, 0 to 3; `attempts` also lists one in flight (its `finishedAt` null), which this does not count yet.",
    }),
    nextAttemptAt: TimestampSchema.nullable().openapi({ description: "When the next attempt is due; null once the delivery is finished." }),
    redeliveryOf: z.uuid().nullable().openapi({ description: "For a manual redelivery, the delivery it repeats." }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    attempts: z.array(AttemptSchema),
  })
  .openapi("WebhookDelivery");

export const deliveryView = (d: DeliveryRecord) => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  endpointId: d.endpointId,
  url: d.url,
  status: d.status,
  attemptCount: d.attemptCount,
  nextAttemptAt: isoOrNull(d.nextAttemptAt),
  redeliveryOf: d.redeliveryOf,
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    startedAt: iso(a.startedAt),
    finishedAt: isoOrNull(a.finishedAt),
    durationMs: a.durationMs,
    responseStatus: a.responseStatus,
    error: a.error,
    succeeded: a.succeeded,
  })),
});

export const ListDeliveriesQuerySchema = PageQuerySchema.extend({
  mode: ModeQuerySchema,
  endpointId: z
    .uuid()
    .optional()
    .openapi({ param: { name: "endpointId", in: "query" }, description: "Only this endpoint's deliveries." }),
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" }, example: "FAILED" }),
  eventType: z
    .enum(EVENT_TYPES)
    .optional()
    .openapi({ param: { name: "eventType", in: "query" }, example: "loan.funded" }),
  loanId: z
    .uuid()
    .optional()
    .openapi({ param: { name: "loanId", in: "query" }, description: "Only deliveries of this loan's events." }),
});
