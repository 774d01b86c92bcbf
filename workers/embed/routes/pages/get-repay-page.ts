import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { DomainError } from "../../../../shared/domain/errors.ts";
import { programContext } from "../../../../shared/embed/program-context.ts";
import { loadProgramLoan } from "../../../../shared/embed/program-loans.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { repaymentFor } from "../../../../shared/settlement/repayment-for-loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { documentPage } from "./document-page.ts";
import { KeyLoanParams } from "../params.ts";
import { newNonce, pageSecurityHeaders } from "../../pages/content-security.ts";
import { RepayPage } from "../../pages/repay-page.tsx";
import { parentOriginFor } from "./parent-origin.ts";

/**
 * `{embed_url}/embed/<embedKey>/repay/<loanId>`: the hosted repayment page for
 * a loan drawn through the key's program (unknown key, unknown loan, or a
 * loan of another program, of the API or of another tenant: 404), framed only
 * by the program's origins. In the widget's iframe (`?parent=<origin>`, one of
 * the program's origins) it keeps the frame's height (`svc:resize`) and tells
 * the page when the loan is repaid (`svc:loan-repaid`).
 */
export const register = (app: OpenAPIHono<EmbedAppEnv>) => {
  documentPage(app, {
    path: "/embed/{embedKey}/repay/{loanId}",
    operationId: "embed.repayPage",
    summary: "The hosted repayment page",
    description:
      "Amount due now and due date; EVM: a wallet button that sends approve then repay and polls until REPAID; TON: a ton:// link, its QR code and the manual transfer fields with copy buttons and the exchange warning. Framed only by the program's origins. Opened from the widget (`parent` one of the program's origins) it posts svc:resize and svc:loan-repaid to that origin.",
    contentType: "text/html",
    params: KeyLoanParams,
    query: z.object({ parent: z.string().optional().openapi({ description: "The embedding page's origin" }) }),
    notFound: "Unknown embed key, or no such loan of its program",
  });
  return app.get("/embed/:embedKey/repay/:loanId", async (c) => {
    const deps = c.get("deps");
    const program = await programContext(deps.db, c.req.param("embedKey"));
    const loan = await loadProgramLoan(deps, { program, loanId: c.req.param("loanId") });
    const now = tenantClock(deps.clock, program.tenant, program.mode).now();
    let instructions = null;
    if (loan.status === "ACTIVE" || loan.status === "DEFAULTED") {
      try {
        const found = await repaymentFor(deps, loan, now);
        instructions = found.supported ? found : null;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    const view = loanView(loan, now);
    const nonce = newNonce();
    const page = RepayPage({
      nonce,
      branding: program.settings.branding,
      loan: {
        id: loan.id,
        status: loan.status,
        chain: loan.chain,
        stablecoin: loan.stablecoin,
        amountDue: view.amountDue,
        dueAt: view.dueAt,
        borrowerWalletAddress: loan.borrowerWalletAddress,
      },
      instructions,
      embedKey: program.program.embedKey,
      parentOrigin: parentOriginFor(program, c.req.query("parent"), c.req.header("referer")),
    });
    return c.html(page, 200, pageSecurityHeaders({ nonce, frameAncestors: program.program.allowedOrigins }));
  });
};
