import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { resendVerificationLink } from "../../../../shared/auth/email-verification.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { baseUrlOf } from "./base-url.ts";

const ResponseSchema = z
  .object({ email: z.string(), expiresAt: TimestampSchema.openapi({ description: "When the new link stops working" }) })
  .openapi("VerificationSent");

export const route = defineRoute(
  { auth: "JWT", errors: [409, 503] },
  {
    method: "post",
    path: "/v1/auth/resend-verification",
    operationId: "auth.resendVerification",
    tags: ["Dashboard identity"],
    summary: "Send a new verification link",
    description:
      "E-mails the signed-in user a new verification link for their own address (earlier links stay valid until they expire). Already verified: 409. At most one link a minute and 5 in 24 hours per address, whichever user they went to (signup's included): 429 with `Retry-After`. Added users (`POST /v1/users`) get no e-mail when they are added; they verify their address with this. The link is on the deployment's `BASE_URL` (without it: 503 naming it, and no e-mail).",
    responses: { 202: { description: "A link was sent", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const deps = c.get("deps");
    const sent = await resendVerificationLink(deps, { userId: principal.userId, baseUrl: baseUrlOf(c), now: deps.clock.now() });
    return c.json({ email: principal.email, expiresAt: sent.expiresAt.toISOString() }, 202);
  });
