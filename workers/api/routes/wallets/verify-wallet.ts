import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { WalletSchema, walletView } from "../../../../shared/schemas/wallet.ts";
import { verifyWalletControl } from "../../../../shared/wallets/proof-of-control.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { VerifyWalletBodySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "post",
    path: "/v1/wallets/{id}/verify",
    operationId: "wallets.verify",
    tags: ["Wallets"],
    summary: "Prove control of a wallet",
    description: [
      "Checks the wallet's signature of its challenge's message and marks it `controlVerified`. POLYGON and BASE: `signature` is the EIP-191 signature (an EOA's, or a smart-contract wallet's where the chain can be asked). TON: `signature`, `publicKey`, `timestamp` and `domain` of the TON Connect `signData` reply; the key must be the wallet's (standard v4 or v5r1), the domain the widget host or the host of one of the tenant's widget programs' allowed origins, the timestamp at most 15 minutes old.",
      "A signature by another key, or a bad TON field: 400 naming the field, and the wallet stays as it was (the challenge may be tried again until it expires). An unknown, expired or already used `challengeId`: 400 naming `challengeId`. A deleted wallet or another tenant's id: 404.",
    ].join("\n\n"),
    request: {
      params: IdParamSchema,
      body: { required: true, content: { "application/json": { schema: VerifyWalletBodySchema } } },
    },
    responses: { 200: { description: "The verified wallet", content: { "application/json": { schema: WalletSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, chain, clock, widgetHost } = c.get("deps");
    const { challengeId, signature, publicKey, timestamp, domain } = c.req.valid("json");
    const wallet = await verifyWalletControl(
      { db, chain, widgetHost },
      { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id, challengeId, signature, ton: { publicKey, timestamp, domain }, now: clock.now() },
    );
    return c.json(walletView(wallet, wallet.balances), 200);
  });
