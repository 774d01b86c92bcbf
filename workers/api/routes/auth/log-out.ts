import type { OpenAPIHono } from "@hono/zod-openapi";
import { endSessions } from "../../../../shared/auth/user-sessions.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "post",
    path: "/v1/auth/logout",
    operationId: "auth.logout",
    tags: ["Dashboard identity"],
    summary: "Log out everywhere",
    description:
      "Ends every session of the calling user, this one and those on other devices: each is refused (401) from its next request. Log in again for a new one. For a token that may have leaked, this is how to end it before it expires.",
    responses: { 204: { description: "Logged out" } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    await endSessions(c.get("deps"), { userId: principal.userId, tenantId: principal.tenant.id });
    return c.body(null, 204);
  });
