import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, KeyLoanParams } from "../params.ts";

export const route = createRoute({
  method: "get",
  path: "/v1/embed/{embedKey}/loans/{loanId}",
  summary: "Loan status for the confirmation screen",
  description: `A loan of the embed key's tenant (another tenant's: 404), with what the borrower's screen shows: status, decision outcome, funding, amounts due, dates and the funding transaction. The merchant's references (borrowerRef, idempotencyKey, borrowerId) are left out. The hosted repayment page polls it. ${EMBED_ERRORS}`,
  request: { params: KeyLoanParams },
  responses: { 200: { description: "The loan", content: { "application/json": { schema: z.object({ loan: z.object({ id: z.string(), status: z.string() }).passthrough() }) } } } },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const ctx = c.get("program");
    const loan = await loadLoan(c.get("deps").db, ctx.tenant.id, c.req.valid("param").loanId);
    const { borrowerRef, idempotencyKey, borrowerId, ...view } = loanView(loan, tenantClock(c.get("deps").clock, ctx.tenant).now());
    return c.json({ loan: { ...view, decision: view.decision ? { outcome: view.decision.outcome, reasons: view.decision.reasons } : null } }, 200);
  });
