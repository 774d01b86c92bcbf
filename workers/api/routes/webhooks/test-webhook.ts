import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, modeScope } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { sendTestEvent } from "../../../../shared/webhooks/send-test-event.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { DeliverySchema, deliveryView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true, errors: [409] },
  {
    method: "post",
    path: "/v1/webhooks/{id}/test",
    operationId: "webhooks.test",
    tags: ["Webhooks"],
    summary: "Send a test event",
    description: [
      'Sends a `webhook.test` event to this endpoint only, whatever its `events` subscription, so the receiver\'s signature check and the delivery history can be tried before any loan exists. The envelope is the usual `{ id, type, createdAt, tenantId, mode, data, program, channel }` with `type: "webhook.test"` and `data: { test: true, endpoint: { id, url } }`, signed and retried (3 attempts) like every delivery.',
      "The event is listed by `GET /v1/events` but is never sent to other endpoints, makes no notification or e-mail, and its failure raises no `webhook.delivery_failed`. Answers the new delivery (`PENDING`); `GET /v1/webhooks/deliveries` then shows its attempts.",
      "Its first attempt goes out even while the endpoint is paused for timing out (`pausedUntil`), so a merchant who fixed the endpoint finds out at once: any answer ends the pause. One test event is on its way to an endpoint at a time: another is 409 until the first attempt of the last one has finished (whatever its outcome).",
      "A deleted endpoint, another tenant's, or (for an API key) one of the other mode: 404.",
    ].join("\n\n"),
    request: { params: IdParamSchema },
    responses: { 201: { description: "The test event's delivery", content: { "application/json": { schema: DeliverySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const delivery = await sendTestEvent(c.get("deps"), {
      tenant: principal.tenant,
      mode: modeScope(principal) ?? undefined,
      endpointId: c.req.valid("param").id,
    });
    return c.json(deliveryView(delivery), 201);
  });
