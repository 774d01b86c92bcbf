import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { logIn } from "../../../../shared/auth/log-in.ts";
import { issueSessionToken } from "../../../../shared/auth/session-tokens.ts";
import { rateLimited } from "../../../../shared/domain/errors.ts";
import { SessionSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { LOGIN_EXAMPLE } from "../../openapi-examples.ts";

const BodySchema = z.object({ email: z.string().max(254), password: z.string().max(256) }).openapi("LoginRequest");

const ResponseSchema = SessionSchema.extend({ user: UserSchema }).openapi("LoginResponse");

export const route = defineRoute(
  // Wrong credentials: 401 (DECISIONS.md).
  { auth: "NONE", errors: [401] },
  {
    method: "post",
    path: "/v1/auth/login",
    operationId: "auth.login",
    tags: ["Dashboard identity"],
    summary: "Log in to the dashboard",
    description:
      "Exchanges dashboard credentials for a session token (JWT, default lifetime 1 hour). Wrong e-mail or password: 401, with the same message and timing either way. Limited per client IP (30 a minute, with the other open routes) and per account (10 attempts a minute for one e-mail, whatever the IPs): 429 with `Retry-After`.",
    request: { body: { required: true, content: { "application/json": { schema: BodySchema, example: LOGIN_EXAMPLE } } } },
    responses: { 200: { description: "Session", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, jwtSecret, jwtTtlSeconds, limiters } = c.get("deps");
    const body = c.req.valid("json");
    // Per account as well as per IP, so guesses spread over many IPs still stop; counted before the password is checked.
    if (!(await limiters.login.limit({ key: `login:${body.email.trim().toLowerCase()}` })).success) throw rateLimited(limiters.periodSeconds);
    const user = await logIn({ db }, body);
    const session = await issueSessionToken(user, jwtSecret, clock.now(), jwtTtlSeconds);
    return c.json(
      {
        accessToken: session.accessToken,
        expiresAt: session.expiresAt.toISOString(),
        user: { id: user.id, email: user.email, role: user.role },
      },
      200,
    );
  });
