import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { formatAmount } from "../../../../shared/domain/money.ts";
import { bootstrapCreditLine } from "../../../../shared/embed/credit-lines.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams, WalletBody } from "../params.ts";
import { BootstrapSchema } from "../schemas.ts";
import { SESSION_401, SessionHeaders, walletSessionOf } from "../wallet-session/session-header.ts";
import { WALLET_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/credit-line/bootstrap",
  operationId: "embed.creditLine.bootstrap",
  summary: "The wallet's revolving credit line",
  description: `The wallet's durable credit line for this program (created on first use): its limit (the product's maximum ticket) and what is available, \`requiresKyc\` until the merchant confirms KYC (POST /v1/credit-lines/:id/kyc-confirmation; only when the tenant gates funding on KYC or its policy requires VERIFIED KYC), and whether the agreement was accepted. A returning borrower is not asked again. \`requiresKyc\` and \`agreementAccepted\` are the line's own to every caller (DECISIONS: \`requiresKyc\` turns false after the merchant's confirmation), so a merchant's backend can poll them. \`available\` is exact only with a wallet session for the wallet (header x-svc-wallet-session); without one it is the whole limit, so typing an address shows nothing of its open loans. ${EMBED_ERRORS}`,
  request: { params: KeyParams, headers: SessionHeaders, ...json(WalletBody, WALLET_EXAMPLE) },
  responses: { 200: { description: "The credit line", content: { "application/json": { schema: BootstrapSchema } } }, 401: SESSION_401 },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const { db, clock } = c.get("deps");
    const { walletAddress } = c.req.valid("json");
    const walletSession = await walletSessionOf(c, walletAddress);
    const line = await bootstrapCreditLine({ db }, { program, walletAddress, now: tenantClock(clock, program.tenant, program.mode).now(), walletSession });
    return c.json(
      { ...line, creditLine: { ...line.creditLine, limit: formatAmount(line.creditLine.limit), available: formatAmount(line.creditLine.available) } },
      200,
    );
  });
