import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { RELEASE_REQUESTED_MESSAGE, requestEmailRelease } from "../../../../shared/auth/email-release.ts";
import { rateLimited } from "../../../../shared/domain/errors.ts";
import { EmailSchema } from "../../../../shared/schemas/auth.ts";
import type { AppEnv } from "../../context.ts";
import { clientIp } from "../../middleware/auth.ts";
import { defineRoute } from "../../route.ts";
import { afterResponse } from "../../../../shared/http/after-response.ts";
import { safeErrorFields } from "../../../../shared/observability/logger.ts";
import { baseUrlOf } from "./base-url.ts";

/** Requests per client IP, on the signup limiter's budget (5 a minute) under its own key: each may send an e-mail. */
const releaseLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { limiters } = c.get("deps");
  if (!(await limiters.signup.limit({ key: `release-email:${clientIp(c.req)}` })).success) throw rateLimited(limiters.periodSeconds);
  return next();
};

const BodySchema = z.object({ email: EmailSchema }).openapi("EmailReleaseRequest");

const ResponseSchema = z.object({ email: z.string(), message: z.string() }).openapi("EmailReleaseRequested");

export const route = defineRoute(
  { auth: "NONE", errors: [503] },
  {
    method: "post",
    path: "/v1/auth/release-email",
    operationId: "auth.requestEmailRelease",
    tags: ["Dashboard identity"],
    summary: "Ask to free an e-mail address someone else used",
    description:
      "An address has one account across all tenants, and using an address (signup, `POST /v1/users`) does not prove it. If someone used yours, so that signup answers 409, ask here: when an account holds the address and has never verified it, a link is e-mailed to the address (`{base_url}/v1/auth/release-email?token=…`, single use, valid 24 hours; `{base_url}` is the deployment's `BASE_URL`, never the Host a request names: without it, 503 naming it and no e-mail). Following it and confirming (`POST /v1/auth/release-email/confirm`) removes that account, and the address can sign up. A verified address is never freed: its owner proved it.\n\nThe answer is 202 with the same body whatever the address, and is given before the link is written and sent, so neither its body nor its timing tells whether an account holds the address or whether a link went out. At most one link a minute and 3 in 24 hours per address; requests are limited to 5 a minute per client IP (429 with `Retry-After`).",
    middleware: [releaseLimit] as const,
    request: { body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 202: { description: "Asked; a link went out if the address can be freed", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const { email } = c.req.valid("json");
    const now = deps.clock.now();
    const baseUrl = baseUrlOf(c);
    // After the answer: whether a link goes out must not show, not even in the time the answer takes.
    const task = requestEmailRelease(deps, { email, baseUrl, now }).catch((err) => deps.log.error("release e-mail request failed", safeErrorFields(err)));
    await afterResponse(() => c.executionCtx, task);
    return c.json({ email: email.trim().toLowerCase(), message: RELEASE_REQUESTED_MESSAGE }, 202);
  });
