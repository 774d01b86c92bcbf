import type { OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { listNotifications } from "../../../../shared/notifications/notification-verbs.ts";
import { pageOf } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { ListNotificationsQuerySchema, NotificationSchema, notificationView } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/notifications",
    operationId: "notifications.list",
    tags: ["Notifications"],
    summary: "List notifications",
    description:
      "Every event of the tenant becomes a notification (the dashboard's Notifications page), e-mailed to the account owner; each shows its e-mail's status, attempts and last error. Newest first, in the order of the events (as `GET /v1/events`); `unread=true` for the unread ones only; `mode` (an API key sees only its own mode, naming the other: 403; a dashboard session sees both unless it names one); `limit` 1 to 100 (default 20) and `cursor`.",
    request: { query: ListNotificationsQuerySchema },
    responses: {
      200: { description: "A page of notifications", content: { "application/json": { schema: pageOf(NotificationSchema).openapi("NotificationPage") } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { unread, limit, cursor, mode } = c.req.valid("query");
    const principal = c.get("principal");
    const page = await listNotifications(c.get("deps"), {
      tenantId: principal.tenant.id,
      mode: modeScope(principal, mode) ?? undefined,
      unread: unread === undefined ? undefined : unread === "true",
      limit,
      cursor,
    });
    return c.json({ data: page.data.map(notificationView), nextCursor: page.nextCursor }, 200);
  });
