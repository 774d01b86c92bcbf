import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { verifyEmailToken } from "../../../../shared/auth/email-verification.ts";
import { iso, TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { linkOutcomePage, linkToken } from "./verify-email-html.ts";

const BodySchema = z.object({ token: z.string().max(200).openapi({ description: "The token of the verification link" }) }).openapi("VerifyEmailRequest");

const ResponseSchema = z
  .object({ userId: z.uuid(), email: z.string(), emailVerified: z.literal(true), emailVerifiedAt: TimestampSchema })
  .openapi("EmailVerified");

export const route = defineRoute(
  { auth: "NONE" },
  {
    method: "post",
    path: "/v1/auth/verify-email",
    operationId: "auth.verifyEmail",
    tags: ["Dashboard identity"],
    summary: "Verify an e-mail address",
    description:
      "Uses the token of a verification link (sent at signup, or by `POST /v1/auth/resend-verification`): the address it was sent to becomes verified, and notification e-mail may go to it from then on. A token is single use and expires 24 hours after it was sent. An unknown, used or expired token: 400, saying which. With a JSON body the answer is JSON; with a form body (the button of the link's page) it is a small HTML page.",
    request: {
      body: {
        // Not `required`: with two media types the library would then validate the body as both; each is validated when it is the one sent.
        required: false,
        content: { "application/json": { schema: BodySchema }, "application/x-www-form-urlencoded": { schema: BodySchema } },
      },
    },
    responses: { 200: { description: "Verified", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const { token, fromForm } = linkToken(c.req.header("content-type"), (form) => (form ? c.req.valid("form").token : c.req.valid("json").token));
    if (!fromForm) {
      const verified = await verifyEmailToken({ db }, { token, now: clock.now() });
      return c.json({ userId: verified.userId, email: verified.email, emailVerified: true as const, emailVerifiedAt: iso(verified.emailVerifiedAt) }, 200);
    }
    // A person at a browser: answer with a page either way.
    return (await linkOutcomePage(() => verifyEmailToken({ db }, { token, now: clock.now() }), {
      heading: "E-mail address verified",
      message: "Thank you. Account notifications can now be e-mailed to this address.",
    })) as never;
  });
