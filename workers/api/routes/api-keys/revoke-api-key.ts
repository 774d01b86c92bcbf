import type { OpenAPIHono } from "@hono/zod-openapi";
import { revokeApiKey } from "../../../../shared/api-keys/api-key-verbs.ts";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { ApiKeySchema, apiKeyView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "delete",
    path: "/v1/api-keys/{id}",
    operationId: "apiKeys.revoke",
    tags: ["Dashboard identity"],
    summary: "Revoke an API key",
    description:
      "Revokes the key: the very next request that presents it gets 401. Answers the key as `GET /v1/api-keys` lists it (with `revokedAt` and `createdBy`). Revoking a revoked key answers the same. Another tenant's key id: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The revoked key", content: { "application/json": { schema: ApiKeySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const key = await revokeApiKey({ db }, { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id, now: clock.now() });
    return c.json(apiKeyView(key), 200);
  });
