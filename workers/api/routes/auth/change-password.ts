import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { issueSessionToken } from "../../../../shared/auth/session-tokens.ts";
import { changePassword } from "../../../../shared/auth/user-sessions.ts";
import { rateLimited } from "../../../../shared/domain/errors.ts";
import { PasswordSchema, SessionSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z.object({ currentPassword: z.string().max(256), newPassword: PasswordSchema }).openapi("ChangePasswordRequest");
const ResponseSchema = SessionSchema.extend({ user: UserSchema }).openapi("ChangePasswordResponse");

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "post",
    path: "/v1/auth/password",
    operationId: "auth.changePassword",
    tags: ["Dashboard identity"],
    summary: "Change your password",
    description:
      "Changes the calling user's password, given the current one (a wrong one: 400 naming `currentPassword`; attempts spend the account's login budget, 10 a minute: 429 with `Retry-After`). Every earlier session of the user, on every device, is refused (401) from its next request; the answer carries a new session for this one. If this session ends meanwhile (a log-out on any device), the change is not made: 401, and the password stays.",
    request: { body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 200: { description: "The new session", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const { db, clock, jwtSecret, jwtTtlSeconds, limiters } = c.get("deps");
    const body = c.req.valid("json");
    // Guesses at the current password spend the account's login budget (a stolen session must not try them freely).
    if (!(await limiters.login.limit({ key: `login:${principal.email}` })).success) throw rateLimited(limiters.periodSeconds);
    const user = await changePassword({ db }, { userId: principal.userId, tenantId: principal.tenant.id, sessionVersion: principal.sessionVersion, ...body });
    const session = await issueSessionToken(user, jwtSecret, clock.now(), jwtTtlSeconds);
    return c.json(
      { accessToken: session.accessToken, expiresAt: session.expiresAt.toISOString(), user: { id: user.id, email: user.email, role: user.role } },
      200,
    );
  });
