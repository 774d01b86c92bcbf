import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { account } from "../../../../shared/sandbox/sandbox-chain.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { chainDeps, SANDBOX_ONLY } from "./chain-schemas.ts";

const AccountSchema = z
  .object({
    chain: ChainSchema,
    address: z.string().openapi({ description: "As the chain reads it (EIP-55 on EVM, raw `0:<hex>` on TON)" }),
    balance: z.string().openapi({ description: "Test stablecoin, 6 decimals", example: "102.000000" }),
    nonce: z.number().int().nullable().openapi({ description: "EVM: the nonce the wallet's next signed transaction must carry; null on TON and Solana" }),
  })
  .openapi("SandboxAccount");

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "get",
    path: "/v1/sandbox/chain/accounts/{address}",
    operationId: "sandbox.chain.account",
    tags: ["Sandbox"],
    summary: "Read a wallet on a simulated chain",
    description: `A wallet's test stablecoin balance and, on EVM, the nonce its next signed transaction must carry (what a borrower's wallet would ask its node before signing the repayment's transactions). A read; a wallet the ledger never saw: balance 0, nonce 0. ${SANDBOX_ONLY}`,
    request: { params: z.object({ address: z.string().min(1).max(128) }), query: z.object({ chain: ChainSchema }) },
    responses: { 200: { description: "The wallet", content: { "application/json": { schema: AccountSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(await account(chainDeps(c), { ...c.req.valid("query"), address: c.req.valid("param").address, tenant: c.get("principal").tenant }), 200),
  );
