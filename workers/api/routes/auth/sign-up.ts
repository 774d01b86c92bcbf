import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_COMPANY_NAME_LENGTH } from "../../../../shared/domain/branding.ts";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import type { MiddlewareHandler } from "hono";
import { sendVerificationLink } from "../../../../shared/auth/email-verification.ts";
import { issueSessionToken } from "../../../../shared/auth/session-tokens.ts";
import { rateLimited } from "../../../../shared/domain/errors.ts";
import { EmailSchema, PasswordSchema, SessionSchema, UserSchema } from "../../../../shared/schemas/auth.ts";
import { signUp } from "../../../../shared/tenants/sign-up.ts";
import type { AppEnv } from "../../context.ts";
import { clientIp } from "../../middleware/auth.ts";
import { defineRoute } from "../../route.ts";
import { baseUrlOf } from "./base-url.ts";
import { SIGNUP_EXAMPLE } from "../../openapi-examples.ts";

/**
 * Signups per client IP (`SIGNUP_LIMITER`, stricter than the IP limit of the
 * other open routes): signup answers 409 for an e-mail that has an account,
 * and each one sends a verification e-mail, so both are kept slow.
 */
const signupLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { limiters } = c.get("deps");
  if (!(await limiters.signup.limit({ key: `signup:${clientIp(c.req)}` })).success) throw rateLimited(limiters.periodSeconds);
  return next();
};

const BodySchema = z
  .object({
    email: EmailSchema,
    password: PasswordSchema,
    companyName: plainText(MAX_COMPANY_NAME_LENGTH),
    releaseToken: z
      .string()
      .regex(/^[0-9A-Za-z]{20,100}$/, "must be the token of a release link")
      .optional()
      .openapi({
        description:
          "Only for an address freed with `POST /v1/auth/release-email/confirm` in the last 24 hours: the token of that release link. Without it such an address answers 409; any other signup ignores it.",
      }),
  })
  .openapi("SignupRequest");

const ResponseSchema = SessionSchema.extend({
  tenant: z.object({ id: z.uuid(), name: z.string() }),
  user: UserSchema,
}).openapi("SignupResponse");

export const route = defineRoute(
  { auth: "NONE", errors: [409, 503] },
  {
    method: "post",
    path: "/v1/auth/signup",
    operationId: "auth.signup",
    tags: ["Dashboard identity"],
    summary: "Create a sandbox tenant and its owner",
    description:
      "Creates a sandbox tenant that can lend at once: the OWNER user, a POLYGON/USDC merchant configuration with its active loan product, a widget program with its embed key, and a sandbox liquidity pool funded with 100,000.00 test USDC. Returns a dashboard session. An e-mail that already has an account: 409 (which tells whether an address has an account: signups are therefore limited to 5 a minute per client IP, 429 with `Retry-After`). If that account is not yours and never verified the address, `POST /v1/auth/release-email` e-mails the address a link that frees it. For 24 hours after an address is freed, only the person who followed the link signs up with it (`releaseToken`); anyone else, 409.\n\nSends one e-mail to the address: a verification link (`{base_url}/v1/auth/verify-email?token=…`, single use, valid 24 hours), with no text from the request. Links are counted per address, whatever the account, from the address's last release (POST /v1/auth/release-email/confirm): none is sent when the address got one in the last minute or 5 in the last 24 hours (an address an account took and removed, say), and `POST /v1/auth/resend-verification` sends one once the budget allows. `{base_url}` is the deployment's `BASE_URL`, never the Host a request names: a deployment without it answers 503 naming it and makes no account (under development only, the request's origin stands in). Until it is followed, `GET /v1/me` shows `emailVerified: false` and no notification e-mail goes to the address (notifications show e-mail status `SKIPPED`); everything else works at once.",
    middleware: [signupLimit] as const,
    request: { body: { required: true, content: { "application/json": { schema: BodySchema, example: SIGNUP_EXAMPLE } } } },
    responses: { 201: { description: "Tenant created", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const { db, clock, jwtSecret, jwtTtlSeconds } = deps;
    const body = c.req.valid("json");
    const now = clock.now();
    // Before the tenant is made: a deployment that cannot write the link (no BASE_URL) makes no account.
    const baseUrl = baseUrlOf(c);
    const { tenant, user } = await signUp({ db }, { ...body, now });
    // Awaited, so the link is in the mailbox when signup answers; a failed send is logged and can be asked for again.
    // Within the address's budget, as every link (an audit looped signup, a second OWNER and removing itself to mail
    // a stranger's address as often as the signup limiter allowed): over it, none now, and resend works later.
    await sendVerificationLink(deps, { userId: user.id, email: user.email, baseUrl, now, throttled: true });
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
