import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { checkEligibility } from "../../../../shared/embed/eligibility.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams, WalletBody } from "../params.ts";
import { EligibilitySchema } from "../schemas.ts";
import { SESSION_401, SessionHeaders, walletSessionOf } from "../wallet-session/session-header.ts";
import { WALLET_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/eligibility",
  operationId: "embed.eligibility",
  summary: "Wallet eligibility",
  description: `Whether the wallet may draw: blocked wallets, open loans against the policy's maximum, and KYC still to be confirmed by the merchant (code KYC_REQUIRED). Amount rules apply at accept. The open-loan rule is evaluated only with a wallet session for the wallet (header x-svc-wallet-session); without one, the answer carries WALLET_BLOCKED (the merchant's policy), KYC_REQUIRED as bootstrap's \`requiresKyc\` says it (the line's own, off once the merchant confirms KYC) and LIVE_KYC_POLICY_REQUIRED, and nothing about the wallet's open loans; underwriting applies every rule at accept. An address invalid for the program's chain: 400. ${EMBED_ERRORS}`,
  request: { params: KeyParams, headers: SessionHeaders, ...json(WalletBody, WALLET_EXAMPLE) },
  responses: { 200: { description: "The result", content: { "application/json": { schema: EligibilitySchema } } }, 401: SESSION_401 },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const { db, clock } = c.get("deps");
    const { walletAddress } = c.req.valid("json");
    const walletSession = await walletSessionOf(c, walletAddress);
    return c.json(await checkEligibility({ db }, { program, walletAddress, now: tenantClock(clock, program.tenant, program.mode).now(), walletSession }), 200);
  });
