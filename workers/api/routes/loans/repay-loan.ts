import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { LoanIdParamSchema } from "../../../../shared/schemas/loan.ts";
import { repaymentFor } from "../../../../shared/settlement/repayment-for-loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const RepaymentInstructionsSchema = z
  .object({
    chain: z.string(),
    supported: z.boolean().openapi({ description: "false: the loan's chain takes no repayment yet; `reason` says why and no other field is present" }),
    reason: z.string().optional().openapi({ description: "Only when `supported` is false" }),
    amount: z.string().optional().openapi({ description: "The amount due now (EVM, Solana: 2 decimals, or 6 when not whole cents; TON: always 6)" }),
    amountUnits: z.string().optional().openapi({ description: "The same amount in token base units (10^-6)" }),
  })
  .passthrough()
  .openapi("RepaymentInstructions", {
    description: [
      "EVM (POLYGON_AMOY, BASE_SEPOLIA, POLYGON, BASE): `{ chain, chainId, token: { address, symbol, decimals }, spender, collections, amount, amountUnits, loanIdBytes32, transactions: [approve, repay] }`; each transaction `{ to, data, value, description }` is signable as is (EIP-1559 with the chain id). The loan id travels as its UUID's 16 bytes left-aligned in a bytes32. The pool's `repay(loanId, collections, amount)` moves the stablecoin straight from the payer to `collections` and never holds it: on a live chain the lender's verified COLLECTIONS wallet of that chain, on a sandbox chain the simulated pool itself.",
      'TON (TON_TESTNET, TON): `{ chain, supported, to, asset: "USDT", amount (6 decimals), amountUnits, comment: "svc:repay:<loanId>", jettonMaster, links: { ton, tonkeeper } }`. On TON, `to` is the lender\'s verified COLLECTIONS wallet; on TON_TESTNET the simulated settlement wallet. The comment must be exact, and the transfer must forward some TON so the recipient is notified (wallet apps do with a comment); transfers from an exchange lose it and are not matched.',
      'SOLANA_DEVNET: `{ chain, supported, to, asset: "USDC", mint, amount, amountUnits, memo: "svc:repay:<loanId>", links: { solana } }`.',
      "Not supported: `{ chain, supported: false, reason }` (200) when the loan's live chain takes no repayment yet: no pool contract configured for it (EVM), or the lender has no verified COLLECTIONS wallet on that chain (EVM and TON).",
    ].join("\n\n"),
  });

export const route = defineRoute(
  { auth: "KEY", errors: [409] },
  {
    method: "post",
    path: "/v1/loans/{id}/repay",
    operationId: "loans.repay",
    tags: ["Repayment"],
    summary: "Repayment instructions",
    description:
      "What the borrower signs (EVM: the stablecoin `approve` then the pool's `repay`, which pays the lender's COLLECTIONS wallet directly on live chains) or sends (TON: a USDT transfer with the exact comment; Solana: a USDC transfer with the memo) to repay the loan. For ACTIVE and DEFAULTED loans (otherwise 409), for the amount due now: late fees included, partial payments deducted; fetch them at payment time. The settlement listener applies the payment once it confirms.",
    request: { params: LoanIdParamSchema },
    responses: { 200: { description: "Instructions for the loan's chain", content: { "application/json": { schema: RepaymentInstructionsSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const loan = await loadLoan(deps.db, tenant.id, c.req.valid("param").id, modeScope(principal));
    return c.json((await repaymentFor(deps, loan, tenantClock(deps.clock, tenant, loan.mode).now())) as never, 200);
  });
