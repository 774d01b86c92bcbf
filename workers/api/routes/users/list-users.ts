import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { RoleSchema } from "../../../../shared/schemas/auth.ts";
import { iso, pageOf, PageQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { listUsers } from "../../../../shared/users/list-users.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const ListedUserSchema = z.object({ id: z.uuid(), email: z.string(), role: RoleSchema, createdAt: TimestampSchema }).openapi("ListedUser");

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/users",
    operationId: "users.list",
    tags: ["Dashboard identity"],
    summary: "List dashboard users",
    description:
      "The tenant's dashboard users, newest first, each with its e-mail, role and when it was added (the dashboard's Team page). Any dashboard role may read; API keys may not (401). `limit` 1 to 100 (default 20) and `cursor` (the previous page's `nextCursor`).",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of users", content: { "application/json": { schema: pageOf(ListedUserSchema).openapi("UserPage") } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await listUsers(c.get("deps"), { tenantId: c.get("principal").tenant.id, limit, cursor });
    return c.json({ data: page.data.map((u) => ({ id: u.id, email: u.email, role: u.role, createdAt: iso(u.createdAt) })), nextCursor: page.nextCursor }, 200);
  });
