import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { checkEligibility } from "../../../../shared/embed/eligibility.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams, WalletBody } from "../params.ts";

export const route = createRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/eligibility",
  summary: "Wallet eligibility",
  description: `Whether the wallet may draw: blocked wallets, open loans against the policy's maximum, and KYC still to be confirmed by the merchant (code KYC_REQUIRED). Amount rules apply at accept. An address invalid for the program's chain: 400. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(WalletBody) },
  responses: {
    200: {
      description: "The result",
      content: { "application/json": { schema: z.object({ walletAddress: z.string(), eligible: z.boolean(), reasons: z.array(z.object({ code: z.string(), message: z.string() })) }) } },
    },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = c.get("program");
    const { db, clock } = c.get("deps");
    return c.json(await checkEligibility(db, ctx, c.req.valid("json").walletAddress, tenantClock(clock, ctx.tenant).now()), 200);
  });
