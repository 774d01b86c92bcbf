import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { faucet, submitTransaction, transfer } from "../../../../shared/sandbox/sandbox-chain.ts";
import { ChainSchema } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const Amount = z.string().regex(/^\d+(\.\d{1,6})?$/, "must be a decimal string with at most 6 decimals").openapi({ example: "150.00" });
const TxResult = z
  .object({ txHash: z.string(), status: z.enum(["success", "reverted", "failed"]), blockNumber: z.number().int() })
  .passthrough()
  .openapi("SandboxTransaction");
const json = <T extends z.ZodTypeAny>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });
const ok = { 200: { description: "Included in a block and processed by the settlement listener", content: { "application/json": { schema: TxResult } } } };
const SANDBOX = "Sandbox tenants and sandbox chains only (403 otherwise).";

const faucetRoute = defineRoute(
  { auth: "KEY", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/faucet",
    tags: ["Sandbox"],
    summary: "Test stablecoin for a wallet",
    description: `Mints test USDC (EVM, Solana) or USDT (TON) to \`address\` on a simulated chain, at most 1,000,000 per call. ${SANDBOX}`,
    request: json(z.object({ chain: ChainSchema, address: z.string().min(1).max(128), amount: Amount }).openapi("FaucetRequest")),
    responses: ok,
  },
);

const transferRoute = defineRoute(
  { auth: "KEY", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/transfers",
    tags: ["Sandbox"],
    summary: "A plain token transfer (TON jetton with comment, Solana with memo)",
    description: `A transfer of the chain's stablecoin from \`from\` to \`to\` with \`comment\` (TON) or memo (Solana). Answers once the settlement listener has processed it: a repayment to the settlement wallet with \`svc:repay:<loanId>\` is already applied. A sender who cannot cover it: status \`failed\` (and \`loan.repayment_failed\` when it named a loan). ${SANDBOX}`,
    request: json(
      z
        .object({
          chain: ChainSchema,
          from: z.string().min(1).max(128),
          to: z.string().min(1).max(128),
          amount: Amount,
          comment: z.string().max(512).nullable().optional(),
          token: z.string().min(1).max(128).optional().openapi({ description: "Another jetton/mint than the stablecoin (to test that it does not count)" }),
        })
        .openapi("SandboxTransferRequest"),
    ),
    responses: ok,
  },
);

const transactionRoute = defineRoute(
  { auth: "KEY", errors: [403] },
  {
    method: "post",
    path: "/v1/sandbox/chain/transactions",
    tags: ["Sandbox"],
    summary: "Submit a signed EVM transaction",
    description: `An EVM transaction signed by the borrower's key (e.g. the \`approve\` and \`repay\` of POST /v1/loans/:id/repay), as serialized hex. The sender is recovered, the chain id and nonce checked (else 400 naming \`signedTransaction\`), and it is executed with ERC-20 rules: a repay without allowance or balance reverts. Answers once the settlement listener has processed it. ${SANDBOX}`,
    request: json(z.object({ chain: ChainSchema, signedTransaction: z.string().regex(/^0x[0-9a-fA-F]+$/, "must be 0x-prefixed hex").max(100_000) }).openapi("SandboxTransactionRequest")),
    responses: ok,
  },
);

export const register = (app: OpenAPIHono<AppEnv>) => {
  const depsOf = (c: { get(k: "deps"): AppEnv["Variables"]["deps"] }) => {
    const d = c.get("deps");
    return { db: d.db, chain: d.chain, writer: d.loans, clock: d.clock, simChains: d.simChains };
  };
  app.openapi(faucetRoute, async (c) => c.json(await faucet(depsOf(c), c.get("principal").tenant, c.req.valid("json")), 200));
  app.openapi(transferRoute, async (c) => c.json(await transfer(depsOf(c), c.get("principal").tenant, c.req.valid("json")), 200));
  app.openapi(transactionRoute, async (c) => c.json(await submitTransaction(depsOf(c), c.get("principal").tenant, c.req.valid("json")), 200));
};
