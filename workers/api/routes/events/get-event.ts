import type { OpenAPIHono } from "@hono/zod-openapi";
import { getEvent } from "../../../../shared/events/list-events.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { EventEnvelopeSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/events/{id}",
    operationId: "events.get",
    tags: ["Events"],
    summary: "Get an event",
    description:
      "One event of the tenant as its envelope (the body a webhook delivery of it carries), by its `id`. Another tenant's event, or an unknown id: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The event", content: { "application/json": { schema: EventEnvelopeSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const envelope = await getEvent(c.get("deps"), { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id });
    return c.json(envelope, 200);
  });
