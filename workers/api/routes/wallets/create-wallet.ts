import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { WalletSchema, walletView } from "../../../../shared/schemas/wallet.ts";
import { createWallet } from "../../../../shared/wallets/wallet-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { CreateWalletBodySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "post",
    path: "/v1/wallets",
    operationId: "wallets.create",
    tags: ["Wallets"],
    summary: "Add a live wallet",
    description: [
      "Adds one of the tenant's own wallets on a live chain (POLYGON, BASE, TON) in one role: TREASURY, DISBURSEMENT (sends principal), COLLECTIONS (receives repayments) or GAS (pays fees). One address may hold several roles: add it once per role. The same address in the same role on the same chain again: 409.",
      "A sandbox chain: 400 naming `chain` (sandbox chains are simulated and take no wallets). An address that is not valid for the chain: 400 naming `address`; it is stored canonical (EIP-55 on EVM, raw `0:<hex>` on TON), so two spellings of one address are one wallet.",
      "A new wallet is unverified (`controlVerified: false`) until it signs a challenge (`POST /v1/wallets/{id}/challenge`, then `/verify`); it must be verified before it funds or collects.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: CreateWalletBodySchema } } } },
    responses: { 201: { description: "Wallet added", content: { "application/json": { schema: WalletSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, chain, clock } = c.get("deps");
    const wallet = await createWallet({ db, chain }, { ...c.req.valid("json"), tenantId: c.get("principal").tenant.id, now: clock.now() });
    return c.json(walletView(wallet, wallet.balances), 201);
  });
