import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { errorBodyForStatus } from "../../../../shared/domain/errors.ts";
import { listMailboxForTenant } from "../../../../shared/notifications/notification-verbs.ts";
import { iso, pageOf, PageQuerySchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const MailSchema = z
  .object({
    id: z.string(),
    to: z.string(),
    subject: z.string(),
    body: z.string(),
    notificationId: z.string().nullable(),
    createdAt: TimestampSchema,
  })
  .openapi("DevMail");

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/dev/mailbox",
    operationId: "dev.mailbox.get",
    tags: ["Development"],
    summary: "Read the local mailbox",
    description:
      "**Local runs only** (`ENVIRONMENT=development`, as `npm run dev` sets it): e-mail is not sent but kept in a mailbox in the database; this lists the messages to the calling user's own address, newest first (a MEMBER does not read the owner's verification link). In deployed environments the route does not exist (404).",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of messages", content: { "application/json": { schema: pageOf(MailSchema).openapi("DevMailPage") } } } },
  },
);

/** Before authentication, so a deployment answers exactly as for any unknown path. */
const developmentOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.get("deps").environment !== "development") return c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404);
  return next();
};

export const register = (app: OpenAPIHono<AppEnv>) => {
  app.use(route.getRoutingPath(), developmentOnly);
  return app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const page = await listMailboxForTenant(c.get("deps"), { tenantId: principal.tenant.id, userId: principal.userId, ...c.req.valid("query") });
    const data = page.data.map((m) => ({
      id: m.id,
      to: m.toAddress,
      subject: m.subject,
      body: m.body,
      notificationId: m.notificationId,
      createdAt: iso(m.createdAt),
    }));
    return c.json({ data, nextCursor: page.nextCursor }, 200);
  });
};
