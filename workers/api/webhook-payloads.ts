import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { CHANNELS } from "../../db/schema/loan-vocabularies.ts";
import { EVENT_TYPES, TENANT_MODES } from "../../shared/domain/vocabularies.ts";
import { LoanSchema } from "../../shared/schemas/loan.ts";
import { WalletSchema } from "../../shared/schemas/wallet.ts";
import { TimestampSchema } from "../../shared/schemas/common.ts";
import { PoolSchema } from "./routes/sandbox/schemas.ts";
import type { AppEnv } from "./context.ts";

type EventType = (typeof EVENT_TYPES)[number];

/** A payment as an event names it: the transaction (and log, on EVM) and its amount, a decimal string. */
const PaymentSchema = z
  .object({
    chain: z.string(),
    txHash: z.string(),
    logIndex: z.number().int(),
    blockNumber: z.number().int(),
    from: z.string().optional(),
    amount: z.string().openapi({ example: "102.00" }),
  })
  .openapi("EventPayment");

const ReasonSchema = z.object({ code: z.string(), message: z.string() });

const loan = { loan: LoanSchema.openapi({ description: "The loan as the API showed it at the event (without `agreement`: GET /v1/loans/{id} has it)." }) };

/** What `data` holds, per event type (README "Webhooks"; the loan events' `loan` is as `GET /v1/loans` lists it). */
export const WEBHOOK_DATA: Record<EventType, z.ZodObject> = {
  "loan.application_submitted": z.object(loan),
  "loan.decision": z.object(loan),
  "loan.approved": z.object(loan),
  "loan.rejected": z.object(loan),
  "loan.funded": z.object(loan),
  "loan.funding_failed": z.object({
    ...loan,
    reason: z.string().openapi({ description: "Why funding did not happen (now)." }),
    reasons: z.array(ReasonSchema).optional().openapi({ description: "When funding is held: each reason, with its code (e.g. KYC_NOT_VERIFIED)." }),
  }),
  "loan.repaid": z.object(loan),
  "loan.repayment_failed": z.object({ ...loan, payment: PaymentSchema.openapi({ description: "The failed transaction and the amount it tried to pay." }) }),
  "loan.repayment_reversed": z.object({ ...loan, reversed: PaymentSchema.openapi({ description: "The credited payment a chain reorganization removed." }) }),
  "loan.overdue": z.object(loan),
  "loan.defaulted": z.object(loan),
  "liquidity.low": z.object({
    pool: PoolSchema,
    loanId: z.uuid().nullable().openapi({ description: "The loan whose reservation crossed the threshold; null when a liquidity change did." }),
  }),
  "liquidity.unavailable": z.object({
    ...loan,
    reason: z.string(),
    requested: z.string().openapi({ description: "The principal the loan needs, a decimal string.", example: "100.00" }),
    pool: z.union([PoolSchema, z.null()]).openapi({ description: "The pool the loan would draw from; null when the tenant has none of its stablecoin." }),
  }),
  "webhook.delivery_failed": z.object({
    delivery: z.object({
      id: z.uuid(),
      endpointId: z.uuid(),
      endpointUrl: z.string(),
      eventId: z.uuid(),
      eventType: z.enum(EVENT_TYPES),
      attempts: z.number().int(),
      lastError: z.string().nullable(),
      lastResponseStatus: z.number().int().nullable(),
    }),
  }),
  "wallet.gas_low": z.object({ wallet: WalletSchema }),
  "webhook.test": z.object({ test: z.literal(true), endpoint: z.object({ id: z.uuid(), url: z.string() }) }),
};

const HEADERS = z.object({
  "x-svc-event": z.enum(EVENT_TYPES).openapi({ description: "The event's type." }),
  "x-svc-signature": z
    .string()
    .openapi({ description: "Lowercase hex HMAC-SHA256 of the exact raw body, keyed with the endpoint's secret (its UTF-8 bytes)." }),
  "x-svc-delivery": z.uuid().openapi({ description: "The delivery (one per event and endpoint; the same on each attempt)." }),
  "x-svc-attempt": z.string().optional().openapi({ description: "The attempt, 1 to 3." }),
  "webhook-id": z.uuid().openapi({ description: "Standard Webhooks: the event id, the same on every attempt and redelivery. Deduplicate on it." }),
  "webhook-timestamp": z.string().openapi({ description: "Standard Webhooks: unix seconds of this attempt (real time, not the sandbox clock)." }),
  "webhook-signature": z.string().openapi({
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the base64-decoded part of the `whsec_` secret.',
  }),
});

/** The envelope of an event of `type`, its `data` typed: what the api document says a receiver gets. */
export const webhookEnvelopeSchema = (type: EventType) =>
  z
    .object({
      id: z.uuid().openapi({ description: "The event id (= `webhook-id`)." }),
      type: z.literal(type),
      createdAt: TimestampSchema.openapi({ description: "On the tenant's clock (the sandbox clock in sandbox)." }),
      tenantId: z.uuid(),
      mode: z.enum(TENANT_MODES),
      data: WEBHOOK_DATA[type],
      program: z.string().nullable().openapi({ description: "The widget program of a widget-originated loan; null otherwise." }),
      channel: z.enum(CHANNELS).nullable(),
    })
    .openapi(`Event_${type.replace(/\./g, "_")}`);

/**
 * The webhooks of the api document (OpenAPI 3.1 `webhooks`): one per event type, the envelope with its `data`
 * typed, and the signature headers, so a generated client types what its receiver gets.
 */
export function registerWebhookPayloads(app: OpenAPIHono<AppEnv>): void {
  for (const type of EVENT_TYPES) {
    const envelope = webhookEnvelopeSchema(type);
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      operationId: `webhooks.${type}`,
      tags: ["Webhooks"],
      // Nothing to authenticate to: the receiver checks the signature headers.
      security: [],
      summary: `${type}, delivered to your endpoint`,
      description:
        "POSTed to each endpoint subscribed to this type (or `*`), signed; any 2xx within the timeout acknowledges it, anything else is retried (3 attempts in all), then the delivery is FAILED and `webhook.delivery_failed` is raised. The same event can arrive more than once: deduplicate on `id` (`webhook-id`).",
      request: { headers: HEADERS, body: { required: true, content: { "application/json": { schema: envelope } } } },
      responses: { 200: { description: "Any 2xx acknowledges the delivery." }, 400: { description: "Anything else (4xx, 5xx, a timeout) is retried." } },
    });
  }
}
