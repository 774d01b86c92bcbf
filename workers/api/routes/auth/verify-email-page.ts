import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { VERIFY_PAGE_HEADERS, verifyEmailHtml } from "./verify-email-html.ts";

const QuerySchema = z.object({ token: z.string().max(200).openapi({ description: "The token from the verification e-mail" }) });

export const route = defineRoute(
  { auth: "NONE" },
  {
    method: "get",
    path: "/v1/auth/verify-email",
    operationId: "auth.verifyEmailPage",
    tags: ["Dashboard identity"],
    summary: "Open a verification link",
    description:
      "Where the verification e-mail's link points (`?token=…`). Shows a page with one button that confirms the address (a form `POST /v1/auth/verify-email`); opening the link alone changes nothing, so mail scanners that fetch links do not use it up.",
    request: { query: QuerySchema },
    responses: { 200: { description: "The confirmation page", content: { "text/html": { schema: z.string() } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, (c) =>
    c.html(
      verifyEmailHtml({
        heading: "Confirm your e-mail address",
        message: "Confirm that this address is yours to receive svc credit account notifications by e-mail.",
        confirm: { token: c.req.valid("query").token },
      }),
      200,
      VERIFY_PAGE_HEADERS,
    ),
  );
