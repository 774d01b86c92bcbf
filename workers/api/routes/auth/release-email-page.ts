import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { VERIFY_PAGE_HEADERS, verifyEmailHtml } from "./verify-email-html.ts";

const QuerySchema = z.object({ token: z.string().max(200).openapi({ description: "The token from the release e-mail" }) });

export const route = defineRoute(
  { auth: "NONE" },
  {
    method: "get",
    path: "/v1/auth/release-email",
    operationId: "auth.releaseEmailPage",
    tags: ["Dashboard identity"],
    summary: "Open a release link",
    description:
      "Where the release e-mail's link points (`?token=…`). Shows a page with one button that frees the address (a form `POST /v1/auth/release-email/confirm`); opening the link alone changes nothing, so mail scanners that fetch links do not use it up.",
    request: { query: QuerySchema },
    responses: { 200: { description: "The confirmation page", content: { "text/html": { schema: z.string() } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, (c) =>
    c.html(
      verifyEmailHtml({
        heading: "Free this e-mail address",
        message:
          "The svc credit account that holds this address never verified it. If that account is not yours, confirm: the account loses the address and its sign-ins end, and you can then sign up with it.",
        confirm: { token: c.req.valid("query").token, action: "/v1/auth/release-email/confirm", button: "Free my e-mail address" },
      }),
      200,
      VERIFY_PAGE_HEADERS,
    ),
  );
