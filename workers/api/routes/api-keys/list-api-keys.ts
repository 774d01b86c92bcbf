import type { OpenAPIHono } from "@hono/zod-openapi";
import { listApiKeys } from "../../../../shared/api-keys/api-key-verbs.ts";
import { pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { ApiKeySchema, apiKeyView } from "./schemas.ts";

export const route = defineRoute(
  // A read: every role (DECISIONS.md restricts the writes to keys to Owner/Admin; a MEMBER reads everything).
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/api-keys",
    operationId: "apiKeys.list",
    tags: ["Dashboard identity"],
    summary: "List API keys",
    description:
      "The tenant's keys, newest first, revoked ones included (with `revokedAt`). Never the secrets. Each key names who created it, `createdBy: { userId, email }`, a dashboard user of this tenant; `createdBy` is null when that user has since been removed (`DELETE /v1/users/:id`; its keys stay unless removed with `revokeKeys=true`) or when no dashboard user created the key. Any role may read the list; creating and revoking are Owner/Admin.",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of keys", content: { "application/json": { schema: pageOf(ApiKeySchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await listApiKeys(c.get("deps"), { tenantId: c.get("principal").tenant.id, limit, cursor });
    return c.json({ data: page.data.map(apiKeyView), nextCursor: page.nextCursor }, 200);
  });
