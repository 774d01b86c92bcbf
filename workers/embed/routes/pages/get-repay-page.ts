import type { OpenAPIHono } from "@hono/zod-openapi";
import { DomainError } from "../../../../shared/domain/errors.ts";
import { programContext } from "../../../../shared/embed/program-context.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { repaymentFor } from "../../../../shared/settlement/repayment-for-loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { newNonce, pageSecurityHeaders } from "../../pages/content-security.ts";
import { RepayPage } from "../../pages/repay-page.tsx";

/**
 * `{embed_url}/embed/<embedKey>/repay/<loanId>`: the hosted repayment page for
 * any loan of the embed key's tenant (unknown key or loan: 404), framed only
 * by the program's origins. In the widget's iframe (`?parent=<origin>`, one of
 * the program's origins) it keeps the frame's height (`svc:resize`) and tells
 * the page when the loan is repaid (`svc:loan-repaid`).
 */
export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.get("/embed/:embedKey/repay/:loanId", async (c) => {
    const deps = c.get("deps");
    const ctx = await programContext(deps.db, c.req.param("embedKey"));
    const loan = await loadLoan(deps.db, ctx.tenant.id, c.req.param("loanId"));
    const now = tenantClock(deps.clock, ctx.tenant).now();
    let instructions = null;
    if (loan.status === "ACTIVE" || loan.status === "DEFAULTED") {
      try {
        instructions = repaymentFor(loan, now);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    const view = loanView(loan, now);
    const nonce = newNonce();
    const page = RepayPage({
      nonce,
      branding: ctx.settings.branding,
      loan: { id: loan.id, status: loan.status, chain: loan.chain, stablecoin: loan.stablecoin, amountDue: view.amountDue, dueAt: view.dueAt },
      instructions,
      embedKey: ctx.program.embedKey,
      // Framed by the widget: the parent's origin, only when it is one of the program's (else nothing is posted).
      parentOrigin: ctx.program.allowedOrigins.includes(c.req.query("parent") ?? "") ? c.req.query("parent")! : null,
    });
    return c.html(page, 200, pageSecurityHeaders({ nonce, frameAncestors: ctx.program.allowedOrigins }));
  });
