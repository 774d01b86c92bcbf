import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { confirmEmailRelease } from "../../../../shared/auth/email-release.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { linkOutcomePage, linkToken } from "./verify-email-html.ts";

const BodySchema = z.object({ token: z.string().max(200).openapi({ description: "The token of the release link" }) }).openapi("ConfirmEmailReleaseRequest");

const ResponseSchema = z
  .object({
    email: z.string(),
    released: z.literal(true),
    heldUntil: TimestampSchema.openapi({ description: "Until then, only a signup with this link's token (`releaseToken`) takes the address" }),
  })
  .openapi("EmailReleased");

export const route = defineRoute(
  { auth: "NONE", errors: [409] },
  {
    method: "post",
    path: "/v1/auth/release-email/confirm",
    operationId: "auth.confirmEmailRelease",
    tags: ["Dashboard identity"],
    summary: "Free an e-mail address",
    description:
      "Uses the token of a release link (`POST /v1/auth/release-email`): whichever account holds the link's address, unverified, when it is followed is removed (the link speaks for the address, not for one account), as `DELETE /v1/users/:id` removes a user: its sessions end on their next request, and API keys it created stay with its tenant. This holds even for a tenant's only OWNER (the address's owner decides); that tenant's longest-standing ADMIN, else its first MEMBER, then becomes OWNER in the same write. For 24 hours (`heldUntil`) the address is held for whoever followed the link: signup takes it only with this token as `releaseToken`, and `POST /v1/users` not at all, so the removed account cannot take it back first. An unknown, used or expired token: 400, saying which. If, since the link was sent, the address was verified or is no longer held: 409, and nothing changes. With a JSON body the answer is JSON; with a form body (the button of the link's page) it is a small HTML page.",
    request: {
      body: {
        // Not `required`: with two media types the library would then validate the body as both; each is validated when it is the one sent.
        required: false,
        content: { "application/json": { schema: BodySchema }, "application/x-www-form-urlencoded": { schema: BodySchema } },
      },
    },
    responses: { 200: { description: "Freed", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const { token, fromForm } = linkToken(c.req.header("content-type"), (form) => (form ? c.req.valid("form").token : c.req.valid("json").token));
    if (!fromForm) {
      const released = await confirmEmailRelease({ db }, { token, now: clock.now() });
      return c.json({ email: released.email, released: true as const, heldUntil: released.heldUntil.toISOString() }, 200);
    }
    // A person at a browser: answer with a page either way.
    return (await linkOutcomePage(() => confirmEmailRelease({ db }, { token, now: clock.now() }), {
      heading: "E-mail address freed",
      message: "The account that held this address no longer does. For the next 24 hours, only you can sign up with it, from this page.",
      link: { href: `/dashboard#releaseToken=${token}`, text: "Sign up with this address" },
    })) as never;
  });
