import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { transfer } from "../../../../shared/sandbox/sandbox-chain.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { ChainAmount, chainDeps, jsonBody, SANDBOX_ONLY, txResponses } from "./chain-schemas.ts";

const BodySchema = z
  .object({
    chain: ChainSchema,
    from: z.string().min(1).max(128),
    to: z.string().min(1).max(128),
    amount: ChainAmount,
    comment: z.string().max(512).nullable().optional(),
    token: z.string().min(1).max(128).optional().openapi({ description: "Another jetton/mint than the stablecoin (to test that it does not count)" }),
  })
  .openapi("SandboxTransferRequest");

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/transfers",
    operationId: "sandbox.chain.transfer",
    tags: ["Sandbox"],
    summary: "A plain token transfer (TON jetton with comment, Solana with memo)",
    description: `A transfer of the chain's stablecoin from \`from\` to \`to\` with \`comment\` (TON) or memo (Solana). Answers once the settlement listener has processed it: a repayment to the settlement wallet with \`svc:repay:<loanId>\` is already applied. A sender who cannot cover it: status \`failed\` (and \`loan.repayment_failed\` when it named a loan). Only wallets of the tenant's own sandbox send: the platform's settlement wallet as \`from\` is 403, a wallet that never held the token on this ledger (another tenant's borrower, say) 400 naming \`from\`. ${SANDBOX_ONLY}`,
    request: jsonBody(BodySchema),
    responses: txResponses,
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await transfer(chainDeps(c), { ...c.req.valid("json"), tenant: c.get("principal").tenant }), 200));
