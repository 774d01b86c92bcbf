import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { quoteDraw } from "../../../../shared/embed/draw.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";
import { QuoteBodySchema, QuoteSchema } from "../schemas.ts";
import { SESSION_401, SessionHeaders, walletSessionOf } from "../wallet-session/session-header.ts";
import { QUOTE_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/quote",
  operationId: "embed.quote",
  summary: "Price a draw and issue its agreement challenge",
  description: `The processing fee, total due and indicative due date for the amount and tenure, and an \`agreementChallenge\` ({ id, message, expiresAt }) whose human-readable message states the merchant, wallet, amount, tenure, chain, stablecoin, total due, challenge id and expiry. The wallet signs the message for accept. Single use, 5 minutes on the tenant's clock. Amount or tenure outside the program's product: 400. A wallet a loan may not pay (one of the service's own addresses on the chain, or one of the tenant's own wallets there, any role): 400 naming walletAddress. With a wallet session for the wallet (header x-svc-wallet-session), an amount above what its credit line has available (its limit less its open loans) is 400 too; without one, the quote says nothing of the wallet's open loans, and accept checks the amount. ${EMBED_ERRORS}`,
  request: { params: KeyParams, headers: SessionHeaders, ...json(QuoteBodySchema, QUOTE_EXAMPLE) },
  responses: { 200: { description: "The quote", content: { "application/json": { schema: QuoteSchema } } }, 401: SESSION_401 },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const deps = c.get("deps");
    const body = c.req.valid("json");
    const walletSession = await walletSessionOf(c, body.walletAddress);
    return c.json(await quoteDraw(deps, { ...body, program, now: tenantClock(deps.clock, program.tenant, program.mode).now(), walletSession }), 200);
  });
