import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, modeScope } from "../../../../shared/auth/principal.ts";
import { createEndpoint, MAX_WEBHOOK_ENDPOINTS } from "../../../../shared/webhooks/endpoints.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { CreatedWebhookEndpointSchema, CreateWebhookBodySchema, endpointView } from "./schemas.ts";
import { WEBHOOK_EXAMPLE } from "../../openapi-examples.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true, errors: [403, 409] },
  {
    method: "post",
    path: "/v1/webhooks",
    operationId: "webhooks.create",
    tags: ["Webhooks"],
    summary: "Register a webhook endpoint",
    description: [
      'Registers `url` to receive every event whose type is in `events` (or every event, with exactly `["*"]`). The response carries the endpoint\'s signing `secret`, **in this response only**: the service keeps it encrypted and never shows it again.',
      'Modes (DECISIONS.md "Modes"): an endpoint receives the events of one `mode` only: an API key\'s own (naming the other mode: 403), or for a dashboard session `mode` (sandbox by default). A live endpoint before go-live certification: 403.',
      `At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per mode (deleted ones do not count); one more: 409. Every event goes to each subscribed endpoint, so the cap keeps one tenant's fan-out from delaying everyone's deliveries.`,
      "Each delivery is a POST of the event envelope with `x-svc-event`, `x-svc-signature` (lowercase hex HMAC-SHA256 of the raw body keyed with the secret), `x-svc-delivery`, and the Standard Webhooks headers `webhook-id` (the event id), `webhook-timestamp` and `webhook-signature`. Events go out in outbox order but several at a time (and a failed attempt is retried later), so they may arrive out of order: order a loan's events by the envelope's `createdAt`, or read the loan; deduplicate on the event id.",
      "URLs: https to a public host, at most 2048 characters, no credentials. Refused (400 naming `url`): IP literals in private, loopback, link-local, CGNAT, multicast or reserved ranges (IPv4 in any spelling, IPv6 including IPv4-mapped and NAT64 forms), and local names (`localhost`, `*.localhost`, `*.local`, `*.internal`, single-label hosts). Local runs (`npm run dev`) also accept `http://127.0.0.1:<port>` and `http://localhost:<port>`.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: CreateWebhookBodySchema, example: WEBHOOK_EXAMPLE } } } },
    responses: { 201: { description: "Endpoint registered", content: { "application/json": { schema: CreatedWebhookEndpointSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, environment, secretsKey } = c.get("deps");
    const { url, events, mode } = c.req.valid("json");
    const principal = c.get("principal");
    const { endpoint, secret } = await createEndpoint(
      { db },
      { tenantId: principal.tenant.id, mode: modeScope(principal, mode) ?? mode ?? "sandbox", url, events, environment, secretsKey, now: clock.now() },
    );
    return c.json({ ...endpointView(endpoint, clock.now()), secret }, 201);
  });
