import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { quoteDraw } from "../../../../shared/embed/draw.ts";
import { AmountSchema } from "../../../../shared/schemas/money.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";

const BodySchema = z.object({ walletAddress: z.string().trim().min(1).max(128), amount: AmountSchema, tenureDays: z.number().int() });

export const route = createRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/quote",
  summary: "Price a draw and issue its agreement challenge",
  description: `The processing fee, total due and indicative due date for the amount and tenure, and an \`agreementChallenge\` ({ id, message, expiresAt }) whose human-readable message states the merchant, wallet, amount, tenure, chain, stablecoin, total due, challenge id and expiry. The wallet signs the message for accept. Single use, 5 minutes on the tenant's clock. Amount or tenure outside the program's product, or an amount above what the wallet's credit line has available (its limit less its open loans; checked again at accept): 400. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(BodySchema) },
  responses: { 200: { description: "The quote", content: { "application/json": { schema: z.object({ totalDue: z.string() }).passthrough() } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = c.get("program");
    const { challenges, clock, db } = c.get("deps");
    return c.json(await quoteDraw(db, challenges, ctx, { ...c.req.valid("json"), now: tenantClock(clock, ctx.tenant).now() }), 200);
  });
