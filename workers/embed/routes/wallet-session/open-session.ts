import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { openWalletSession } from "../../../../shared/embed/wallet-session.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, json, KeyParams } from "../params.ts";
import { OpenWalletSessionBodySchema, WalletSessionSchema } from "../schemas.ts";
import { widgetHostsOf } from "../widget-hosts.ts";
import { OPEN_WALLET_SESSION_EXAMPLE } from "../examples.ts";

export const route = defineEmbedRoute({
  method: "post",
  path: "/v1/embed/{embedKey}/wallet-session",
  operationId: "embed.walletSession.open",
  summary: "Open a wallet session with the wallet's signature",
  description: `Proof that the caller controls the wallet: the challenge (POST …/wallet-session/challenge) must be this program's and this wallet's, unexpired and unused, and the signature the wallet's over its message, checked as accept checks an agreement (EVM EIP-191 incl. ERC-1271/6492 where the chain can be called; Solana ed25519; TON Connect signData text with publicKey, timestamp and domain). Otherwise 400. Returns a token for the header \`x-svc-wallet-session\`, valid 1 hour on the tenant's clock for this program and wallet only: with it, eligibility, bootstrap and quote answer with the wallet's own open loans; without it they show nothing of them. ${EMBED_ERRORS}`,
  request: { params: KeyParams, ...json(OpenWalletSessionBodySchema, OPEN_WALLET_SESSION_EXAMPLE) },
  responses: { 200: { description: "The session", content: { "application/json": { schema: WalletSessionSchema } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const deps = c.get("deps");
    const now = tenantClock(deps.clock, program.tenant, program.mode).now();
    return c.json(
      await openWalletSession(
        { db: deps.db, clock: deps.clock, sessionSecret: deps.sessionSecret, widgetHosts: widgetHostsOf(c), chain: deps.chain },
        { ...c.req.valid("json"), program, now },
      ),
      200,
    );
  });
