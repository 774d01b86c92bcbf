import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { removeUser } from "../../../../shared/users/manage-users.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const QuerySchema = z.object({
  revokeKeys: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      param: { name: "revokeKeys", in: "query" },
      description: "`true`: also revoke the unrevoked API keys this user created, with the removal. `false` or omitted: the keys stay.",
    }),
});

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "delete",
    path: "/v1/users/{id}",
    operationId: "users.remove",
    tags: ["Dashboard identity"],
    summary: "Remove a dashboard user",
    description:
      "Removes a user of the caller's tenant (Owner/Admin): every session of that user is refused (401) from its next request, and its e-mail is free again. API keys it created stay, as the tenant's, and no longer name it (`createdBy: null` in `GET /v1/api-keys`). With `revokeKeys=true`, the unrevoked API keys it created are revoked in the same write as the removal, and only if the removal happens: the very next request with one of them gets 401, as after `DELETE /v1/api-keys/:id`; keys other users created are untouched. Only an OWNER may remove an OWNER (403); the tenant's last OWNER cannot be removed (409: make another user OWNER first). A user may remove itself under the same rules. Another tenant's user id: 404.",
    request: { params: IdParamSchema, query: QuerySchema },
    responses: { 204: { description: "Removed" } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const { clock } = c.get("deps");
    await removeUser(c.get("deps"), {
      actor: { tenantId: principal.tenant.id, userId: principal.userId, role: principal.role },
      id: c.req.valid("param").id,
      revokeKeys: c.req.valid("query").revokeKeys === "true",
      now: clock.now(),
    });
    return c.body(null, 204);
  });
