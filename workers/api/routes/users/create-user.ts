import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { EmailSchema, PasswordSchema, RoleSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import { rateLimited } from "../../../../shared/domain/errors.ts";
import { addUser } from "../../../../shared/users/add-user.ts";
import type { AppEnv } from "../../context.ts";
import { clientIp } from "../../middleware/auth.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z.object({ email: EmailSchema, password: PasswordSchema, role: RoleSchema }).openapi("CreateUserRequest");

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "post",
    path: "/v1/users",
    operationId: "users.create",
    tags: ["Dashboard identity"],
    summary: "Add a dashboard user",
    description:
      "Adds a user with a role to the caller's tenant. Only an OWNER may add an OWNER (403 otherwise). An e-mail that already has an account, in any tenant: 409. A tenant holds at most 50 users: 409 beyond (remove one first). At most 5 additions a minute per tenant and 5 a minute per client IP, whichever tenant they are for, answered or not (429 with `Retry-After`): the 409 tells whether an address has an account, as signup's does, so one client holding many tenants cannot probe addresses faster than that either.\n\nAdding a user does not prove the address is theirs, and nothing is e-mailed to it. Until the user verifies it (sign in, then `POST /v1/auth/resend-verification`), the address's owner can free it (`POST /v1/auth/release-email`), which removes the user.",
    request: { body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 201: { description: "User added", content: { "application/json": { schema: UserSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const { db, clock, limiters } = c.get("deps");
    // Per tenant and per client IP, each on the signup limiter's budget (5 a minute) under its own key: the 409 tells whether an address has an
    // account, as signup's does, and a client that signed up several tenants must not probe at the sum of their budgets.
    for (const key of [`add-user:${principal.tenant.id}`, `add-user-ip:${clientIp(c.req)}`]) {
      if (!(await limiters.signup.limit({ key })).success) throw rateLimited(limiters.periodSeconds);
    }
    const user = await addUser({ db }, { ...c.req.valid("json"), tenantId: principal.tenant.id, actorRole: principal.role, now: clock.now() });
    return c.json(user, 201);
  });
