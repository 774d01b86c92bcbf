import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { formatAmount } from "../../../../shared/domain/money.ts";
import { creditLineFor, creditLineView, requiresKyc, walletFor } from "../../../../shared/embed/credit-lines.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams, WalletBody } from "../params.ts";

export const route = createRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/credit-line/bootstrap",
  summary: "The wallet's revolving credit line",
  description: `The wallet's durable credit line for this program (created on first use): its limit (the product's maximum ticket) and what is available, \`requiresKyc\` until the merchant confirms KYC (POST /v1/credit-lines/:id/kyc-confirmation; only when the tenant gates funding on KYC or its policy requires VERIFIED KYC), and whether the agreement was accepted. A returning borrower is not asked again. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(WalletBody) },
  responses: {
    200: {
      description: "The credit line",
      content: {
        "application/json": {
          schema: z.object({
            creditLine: z.object({ id: z.string(), walletAddress: z.string(), status: z.string(), limit: z.string(), available: z.string() }),
            requiresKyc: z.boolean(),
            agreementAccepted: z.boolean(),
          }),
        },
      },
    },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = c.get("program");
    const { db, clock } = c.get("deps");
    const now = tenantClock(clock, ctx.tenant).now();
    const line = await creditLineFor(db, ctx, walletFor(ctx.chain, c.req.valid("json").walletAddress), now);
    const view = await creditLineView(db, ctx, line);
    return c.json(
      {
        creditLine: { ...view, limit: formatAmount(view.limit), available: formatAmount(view.available) },
        requiresKyc: await requiresKyc(db, ctx, line),
        agreementAccepted: line.agreementAcceptedAt !== null,
      },
      200,
    );
  });
