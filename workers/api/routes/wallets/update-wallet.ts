import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { WalletSchema, walletView } from "../../../../shared/schemas/wallet.ts";
import { updateWallet } from "../../../../shared/wallets/wallet-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { UpdateWalletBodySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "put",
    path: "/v1/wallets/{id}",
    operationId: "wallets.update",
    tags: ["Wallets"],
    summary: "Set a GAS wallet's threshold",
    description: [
      'Sets `gasThreshold` (native units, decimal string such as `"0.5"`, at most 18 decimals on POLYGON and BASE, 9 on TON, greater than 0) or clears it (`null`). When the wallet\'s native balance falls under it, `wallet.gas_low` fires once (webhooks, a dashboard notification and an e-mail to the owner); it fires again only after the balance has been back at or above the threshold. Setting the threshold re-arms the alert.',
      "Only GAS wallets take a threshold: on another role, 400 naming `gasThreshold`. A deleted wallet or another tenant's id: 404.",
    ].join("\n\n"),
    request: {
      params: IdParamSchema,
      body: { required: true, content: { "application/json": { schema: UpdateWalletBodySchema } } },
    },
    responses: { 200: { description: "The saved wallet", content: { "application/json": { schema: WalletSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, chain, clock } = c.get("deps");
    const wallet = await updateWallet(
      { db, chain },
      { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id, gasThreshold: c.req.valid("json").gasThreshold, now: clock.now() },
    );
    return c.json(walletView(wallet, wallet.balances), 200);
  });
