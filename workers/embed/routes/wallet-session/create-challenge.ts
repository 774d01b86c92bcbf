import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { issueWalletSessionChallenge } from "../../../../shared/embed/wallet-session.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";
import { WalletSessionChallengeBodySchema, WalletSessionChallengeSchema } from "../schemas.ts";
import { WALLET_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/wallet-session/challenge",
  operationId: "embed.walletSession.challenge",
  summary: "A challenge to open a wallet session",
  description: `A human-readable message for the wallet to sign (EVM personal_sign, Solana ed25519, TON Connect signData text), naming the merchant, wallet, chain, program, challenge and expiry; signed, it opens a wallet session (POST …/wallet-session). Single use, valid 5 minutes on the tenant's clock, bound to this program and wallet. An address invalid for the program's chain: 400. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(WalletSessionChallengeBodySchema, WALLET_EXAMPLE) },
  responses: { 200: { description: "The challenge", content: { "application/json": { schema: WalletSessionChallengeSchema } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const deps = c.get("deps");
    const { walletAddress } = c.req.valid("json");
    return c.json(await issueWalletSessionChallenge(deps, { program, walletAddress, now: tenantClock(deps.clock, program.tenant, program.mode).now() }), 200);
  });
