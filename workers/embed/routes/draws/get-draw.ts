import type { OpenAPIHono } from "@hono/zod-openapi";
import { defineEmbedRoute } from "../embed-route.ts";
import { embedLoanView, loadProgramLoan } from "../../../../shared/embed/program-loans.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { BOOKMARK_HEADER, freshAsClient, readSessionsOf } from "../../../../db/read-session.ts";
import { BookmarkRequestHeadersSchema, BookmarkResponseHeadersSchema } from "../../../../shared/schemas/read-consistency.ts";
import type { EmbedAppEnv } from "../../env.ts";
import { EMBED_ERRORS, KeyLoanParams } from "../params.ts";
import { EmbedLoanResponseSchema } from "../schemas.ts";

export const route = defineEmbedRoute({
  method: "get",
  path: "/v1/embed/{embedKey}/loans/{loanId}",
  operationId: "embed.loans.get",
  summary: "Loan status for the confirmation screen",
  description: `A loan drawn through this program (any other loan, of another program, of the API or of another tenant: 404, as an unknown id), with what the borrower's screen shows: status, decision outcome, funding, amounts due, dates and the funding transaction. The merchant's references (borrowerRef, idempotencyKey, borrowerId), the loan product, policy version and review are left out. The hosted repayment page polls it. ${EMBED_ERRORS}`,
  request: { params: KeyLoanParams, headers: BookmarkRequestHeadersSchema },
  responses: {
    200: { description: "The loan", headers: BookmarkResponseHeadersSchema, content: { "application/json": { schema: EmbedLoanResponseSchema } } },
  },
});

export const register = (app: OpenAPIHono<EmbedAppEnv>) =>
  app.openapi(route, async (c) => {
    const program = c.get("program");
    const deps = c.get("deps");
    // A poll that sends back the last answer's bookmark reads a replica at least that fresh; the first read, the primary.
    const session = readSessionsOf(deps)(freshAsClient(c.req.header(BOOKMARK_HEADER)));
    const loan = await loadProgramLoan({ db: session.db }, { program, loanId: c.req.valid("param").loanId });
    const bookmark = session.bookmark();
    return c.json(
      { loan: embedLoanView(loan, tenantClock(deps.clock, program.tenant, program.mode).now()) },
      200,
      bookmark ? { [BOOKMARK_HEADER]: bookmark } : {},
    );
  });
