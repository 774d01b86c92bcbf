import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, modeScope } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { deleteEndpoint } from "../../../../shared/webhooks/endpoints.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true },
  {
    method: "delete",
    path: "/v1/webhooks/{id}",
    operationId: "webhooks.delete",
    tags: ["Webhooks"],
    summary: "Delete a webhook endpoint",
    description:
      "Removes the endpoint: it gets no new deliveries, attempts still scheduled for it are not sent, and it leaves `GET /v1/webhooks`. Its past deliveries stay in `GET /v1/webhooks/deliveries`. Deleting it again, or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 204: { description: "Endpoint deleted" } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const principal = c.get("principal");
    await deleteEndpoint({ db }, { tenantId: principal.tenant.id, mode: modeScope(principal) ?? undefined, id: c.req.valid("param").id, now: clock.now() });
    return c.body(null, 204);
  });
