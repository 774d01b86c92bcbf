import type { OpenAPIHono } from "@hono/zod-openapi";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { WalletSchema, walletView } from "../../../../shared/schemas/wallet.ts";
import { getWallet } from "../../../../shared/wallets/wallet-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/wallets/{id}",
    operationId: "wallets.get",
    tags: ["Wallets"],
    summary: "Get a live wallet",
    description:
      "One wallet with its balances read from the chain now (null when this deployment cannot read the chain). Any dashboard role may read. A deleted wallet or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The wallet", content: { "application/json": { schema: WalletSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const wallet = await getWallet(c.get("deps"), { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id });
    return c.json(walletView(wallet, wallet.balances), 200);
  });
