import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { WalletSchema, walletView } from "../../../../shared/schemas/wallet.ts";
import { listWallets } from "../../../../shared/wallets/wallet-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/wallets",
    operationId: "wallets.list",
    tags: ["Wallets"],
    summary: "List live wallets",
    description:
      "The tenant's wallets on live chains, newest first, each with its role, whether control of it was proven, its gas threshold and its balances as the chain reports them now. Balances are null when this deployment cannot read the chain (until the live chain adapters are configured, every deployment). Deleted wallets are left out. Any dashboard role may read.",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of wallets", content: { "application/json": { schema: pageOf(WalletSchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await listWallets(c.get("deps"), { tenantId: c.get("principal").tenant.id, limit, cursor });
    return c.json({ data: page.data.map((w) => walletView(w, w.balances)), nextCursor: page.nextCursor }, 200);
  });
