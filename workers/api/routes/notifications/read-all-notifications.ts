import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { nowByMode } from "../../../../shared/tenants/tenant-context.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { markAllNotificationsRead } from "../../../../shared/notifications/notification-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const ResponseSchema = z
  .object({ updated: z.number().int().openapi({ description: "How many notifications were unread and are now read." }) })
  .openapi("NotificationsRead");

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "post",
    path: "/v1/notifications/read-all",
    operationId: "notifications.readAll",
    tags: ["Notifications"],
    summary: "Mark every notification read",
    description:
      "Sets `readAt` on every unread notification of the tenant (an API key: of its own mode; a dashboard session: both); those already read keep theirs.",
    responses: { 200: { description: "How many changed", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    return c.json(
      await markAllNotificationsRead(
        { db },
        { tenantId: c.get("principal").tenant.id, mode: modeScope(c.get("principal")) ?? undefined, now: nowByMode(clock, c.get("principal").tenant) },
      ),
      200,
    );
  });
