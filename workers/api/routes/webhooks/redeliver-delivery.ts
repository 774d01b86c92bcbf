import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, modeScope } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { redeliver } from "../../../../shared/webhooks/redeliver.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { DeliverySchema, deliveryView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true, errors: [409] },
  {
    method: "post",
    path: "/v1/webhooks/deliveries/{id}/redeliver",
    operationId: "webhooks.deliveries.redeliver",
    tags: ["Webhooks"],
    summary: "Redeliver an event",
    description:
      "Sends the delivery's event to its endpoint again, for example once a failed endpoint is back: a new delivery (`redeliveryOf` = this one) with its own 3 attempts, starting now. The envelope and its `id` (`webhook-id`) are the same as the original's, so a receiver that already processed the event recognizes it. Only a finished delivery (`SUCCEEDED` or `FAILED`) can be redelivered, one at a time: one still `PENDING`, one whose event has a delivery to the endpoint in progress (an earlier redelivery), or one whose endpoint was deleted: 409. Another tenant's delivery: 404.",
    request: { params: IdParamSchema },
    responses: { 201: { description: "The new delivery", content: { "application/json": { schema: DeliverySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, queue } = c.get("deps");
    const principal = c.get("principal");
    const delivery = await redeliver(
      { db, queue },
      { tenantId: principal.tenant.id, mode: modeScope(principal) ?? undefined, deliveryId: c.req.valid("param").id, now: clock.now() },
    );
    return c.json(deliveryView(delivery), 201);
  });
