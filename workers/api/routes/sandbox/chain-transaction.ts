import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { submitTransaction } from "../../../../shared/sandbox/sandbox-chain.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { chainDeps, jsonBody, SANDBOX_ONLY, txResponses } from "./chain-schemas.ts";

const BodySchema = z
  .object({
    chain: ChainSchema,
    signedTransaction: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/, "must be 0x-prefixed hex")
      .max(100_000),
  })
  .openapi("SandboxTransactionRequest");

export const route = defineRoute(
  { auth: "KEY", mode: "sandbox", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/transactions",
    operationId: "sandbox.chain.sendTransaction",
    tags: ["Sandbox"],
    summary: "Submit a signed EVM transaction",
    description: `An EVM transaction signed by the borrower's key (e.g. the \`approve\` and \`repay\` of POST /v1/loans/:id/repay), as serialized hex. The sender is recovered, the chain id and nonce checked, and the sender must have held the stablecoin on this ledger (else 400 naming \`signedTransaction\`; a wrong nonce does not disclose the expected one), and it is executed with ERC-20 rules: a repay without allowance or balance reverts. Answers once the settlement listener has processed it. ${SANDBOX_ONLY}`,
    request: jsonBody(BodySchema),
    responses: txResponses,
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await submitTransaction(chainDeps(c), { ...c.req.valid("json"), tenant: c.get("principal").tenant }), 200));
