import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { faucet } from "../../../../shared/sandbox/sandbox-chain.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { ChainAmount, chainDeps, jsonBody, SANDBOX_ONLY, txResponses } from "./chain-schemas.ts";

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/faucet",
    operationId: "sandbox.chain.faucet",
    tags: ["Sandbox"],
    summary: "Test stablecoin for a wallet",
    description: `Mints test USDC (EVM, Solana) or USDT (TON) to \`address\` on a simulated chain, at most 1,000,000 per call. The platform's own addresses (the pool, the settlement wallet, the funding source, the token contract) are refused with 403: the faucet gives test stablecoin to wallets. ${SANDBOX_ONLY}`,
    request: jsonBody(z.object({ chain: ChainSchema, address: z.string().min(1).max(128), amount: ChainAmount }).openapi("FaucetRequest")),
    responses: txResponses,
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await faucet(chainDeps(c), { ...c.req.valid("json"), tenant: c.get("principal").tenant }), 200));
