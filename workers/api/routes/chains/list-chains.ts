import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { listChains } from "../../../../shared/chains/chain-listing.ts";
import { CHAINS, STABLECOINS } from "../../../../shared/domain/vocabularies.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const ChainSchema = z
  .object({
    chain: z.enum(CHAINS),
    family: z.enum(["EVM", "TON", "SOLANA"]),
    chainId: z.number().int().nullable().openapi({ description: "EVM chain id; null on TON and Solana" }),
    live: z.boolean().openapi({ description: "A live network (real funds; certified tenants only); false for the simulated sandbox chains" }),
    simulated: z.boolean(),
    configured: z.boolean().openapi({
      description:
        "Whether this deployment can lend and collect on the chain: always for the simulated chains; for a live chain, whether a node (RPC URL) is configured for it",
    }),
    confirmations: z.number().int().nullable().openapi({
      description:
        "Blocks a funding or repayment transaction must be under before it counts (0 on simulated chains, which settle at once); null for an unconfigured live chain",
    }),
    stablecoin: z.enum(STABLECOINS),
    tokenAddress: z.string().openapi({ description: "The canonical stablecoin: ERC-20 contract, TON jetton master (raw form) or Solana mint" }),
    decimals: z.number().int(),
    poolAddress: z.string().nullable().openapi({ description: "EVM: the pool contract whose `repay` settles loans; null where none is deployed" }),
    settlementWallet: z.string().nullable().openapi({ description: "TON and Solana: the wallet repayments are sent to" }),
  })
  .openapi("Chain");

export const route = defineRoute(
  { auth: "NONE" },
  {
    method: "get",
    path: "/v1/chains",
    operationId: "chains.list",
    tags: ["Platform"],
    summary: "The chains this deployment is configured for",
    description:
      "Every chain value of the API with its chain id, whether it is live, its stablecoin (token address and decimals) and the pool contract or settlement wallet repayments go to, as this deployment is configured (live chains: the token and pool of its configuration, whether a node is configured, and the confirmations a transaction needs). Public (no credentials), rate limited per client IP.",
    responses: {
      200: {
        description: "Every chain, in the order of the `chain` vocabulary",
        content: { "application/json": { schema: z.object({ data: z.array(ChainSchema), nextCursor: z.null() }).openapi("ChainList") } },
      },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, (c) => c.json({ data: listChains(c.get("deps").liveChains), nextCursor: null }, 200));
