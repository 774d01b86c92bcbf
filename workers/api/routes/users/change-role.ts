import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { RoleSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { changeRole } from "../../../../shared/users/manage-users.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z.object({ role: RoleSchema }).openapi("ChangeUserRoleRequest");

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "patch",
    path: "/v1/users/{id}",
    operationId: "users.changeRole",
    tags: ["Dashboard identity"],
    summary: "Change a dashboard user's role",
    description:
      "Sets the role of a user of the caller's tenant (Owner/Admin); it applies from the user's next request. Only an OWNER may give or take the OWNER role (403); the tenant's last OWNER keeps it (409). Another tenant's user id: 404.",
    request: { params: IdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 200: { description: "The user with its role", content: { "application/json": { schema: UserSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const user = await changeRole(c.get("deps"), {
      actor: { tenantId: principal.tenant.id, userId: principal.userId, role: principal.role },
      id: c.req.valid("param").id,
      role: c.req.valid("json").role,
    });
    return c.json(user, 200);
  });
