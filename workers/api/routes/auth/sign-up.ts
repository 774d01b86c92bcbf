import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { issueSessionToken } from "../../../../shared/auth/session-tokens.ts";
import { EmailSchema, PasswordSchema, SessionSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import { signUp } from "../../../../shared/tenants/sign-up.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({ email: EmailSchema, password: PasswordSchema, companyName: z.string().trim().min(1).max(200) })
  .openapi("SignupRequest");

const ResponseSchema = SessionSchema.extend({
  tenant: z.object({ id: z.uuid(), name: z.string() }),
  user: UserSchema,
}).openapi("SignupResponse");

export const route = defineRoute(
  { auth: "NONE", errors: [409] },
  {
    method: "post",
    path: "/v1/auth/signup",
    tags: ["Dashboard identity"],
    summary: "Create a sandbox tenant and its owner",
    description:
      "Creates a sandbox tenant that can lend at once: the OWNER user, a POLYGON/USDC merchant configuration with its active loan product, a widget program with its embed key, and a sandbox liquidity pool funded with 100,000.00 test USDC. Returns a dashboard session. An e-mail that already has an account: 409.",
    request: { body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 201: { description: "Tenant created", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, jwtSecret, jwtTtlSeconds } = c.get("deps");
    const body = c.req.valid("json");
    const now = clock.now();
    const { tenant, user } = await signUp(db, { ...body, now });
    const session = await issueSessionToken(user, jwtSecret, now, jwtTtlSeconds);
    return c.json(
      {
        tenant: { id: tenant.id, name: tenant.name },
        user: { id: user.id, email: user.email, role: user.role },
        accessToken: session.accessToken,
        expiresAt: session.expiresAt.toISOString(),
      },
      201,
    );
  });
