import type { OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { ModeQuerySchema, pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { listEndpoints } from "../../../../shared/webhooks/endpoints.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { endpointView, WebhookEndpointSchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/webhooks",
    operationId: "webhooks.list",
    tags: ["Webhooks"],
    summary: "List webhook endpoints",
    description:
      "The tenant's registered (not deleted) endpoints, newest first, each with its subscribed `events` and the first characters of its secret (`secretPrefix`). Never the secret.",
    request: { query: PageQuerySchema.extend({ mode: ModeQuerySchema }) },
    responses: {
      200: { description: "A page of endpoints", content: { "application/json": { schema: pageOf(WebhookEndpointSchema).openapi("WebhookEndpointPage") } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { mode, ...query } = c.req.valid("query");
    const page = await listEndpoints(c.get("deps"), { tenantId: principal.tenant.id, ...query, mode: modeScope(principal, mode) ?? undefined });
    const now = c.get("deps").clock.now();
    return c.json({ data: page.data.map((e) => endpointView(e, now)), nextCursor: page.nextCursor }, 200);
  });
