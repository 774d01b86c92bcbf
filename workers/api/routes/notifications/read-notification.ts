import type { OpenAPIHono } from "@hono/zod-openapi";
import { nowByMode } from "../../../../shared/tenants/tenant-context.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { markNotificationRead } from "../../../../shared/notifications/notification-verbs.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { NotificationSchema, notificationView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "post",
    path: "/v1/notifications/{id}/read",
    operationId: "notifications.read",
    tags: ["Notifications"],
    summary: "Mark a notification read",
    description:
      "Sets `readAt`. Marking a read notification again changes nothing and answers the same (the first `readAt` stays). Another tenant's id, or one of the other mode than the API key's: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The notification", content: { "application/json": { schema: NotificationSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const notification = await markNotificationRead(
      { db },
      {
        tenantId: c.get("principal").tenant.id,
        mode: modeScope(c.get("principal")) ?? undefined,
        id: c.req.valid("param").id,
        now: nowByMode(clock, c.get("principal").tenant),
      },
    );
    return c.json(notificationView(notification), 200);
  });
