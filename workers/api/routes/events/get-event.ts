import type { OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
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
      "One event of the tenant as its envelope (the body a webhook delivery of it carries), by its `id`. Another tenant's event, an event of the other mode than the API key's, or an unknown id: 404 (a dashboard session reads both modes).",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The event", content: { "application/json": { schema: EventEnvelopeSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const envelope = await getEvent(c.get("deps"), { tenantId: principal.tenant.id, id: c.req.valid("param").id, mode: modeScope(principal) ?? undefined });
    return c.json(envelope, 200);
  });
