import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { loadProgramLoan } from "../../../../shared/embed/program-loans.ts";
import { repaymentFor } from "../../../../shared/settlement/repayment-for-loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, KeyLoanParams } from "../params.ts";

export const route = defineEmbedRoute(
  {
    method: "get",
    path: "/v1/embed/{embedKey}/loans/{loanId}/repayment-instructions",
    operationId: "embed.loans.repaymentInstructions",
    summary: "Repayment instructions for a loan of this program",
    description: `The same instructions as POST /v1/loans/:id/repay (EVM approve + repay, TON transfer with comment, Solana transfer with memo) for a loan drawn through this program, for the amount due now; \`{ chain, supported: false, reason }\` when the loan's live chain takes no repayment yet (no pool, or no verified COLLECTIONS wallet of the lender there). Unknown loan, or a loan of another program, of the API or of another tenant: 404; a loan not ACTIVE or DEFAULTED: 409. ${EMBED_ERRORS}`,
    request: { params: KeyLoanParams },
    responses: {
      200: {
        description: "Instructions for the loan's chain",
        content: { "application/json": { schema: z.object({ chain: z.string(), supported: z.boolean() }).passthrough() } },
      },
    },
  },
  { errors: [409] },
);

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const loan = await loadProgramLoan(c.get("deps"), { program, loanId: c.req.valid("param").loanId });
    return c.json((await repaymentFor(c.get("deps"), loan, tenantClock(c.get("deps").clock, program.tenant, program.mode).now())) as never, 200);
  });
