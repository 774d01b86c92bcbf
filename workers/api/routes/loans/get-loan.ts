import type { OpenAPIHono } from "@hono/zod-openapi";
import { loanDetailView } from "../../../../shared/agreements/agreement-view.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { BOOKMARK_HEADER, freshAsClient, readSessionsOf } from "../../../../db/read-session.ts";
import { BookmarkRequestHeadersSchema, BookmarkResponseHeadersSchema } from "../../../../shared/schemas/read-consistency.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/loans/{id}",
    operationId: "loans.get",
    tags: ["Loans"],
    summary: "Get a loan",
    description:
      "The loan with its decision and its signed `agreement` (the exact message, signature and TON Connect fields; null when none is on file); late fees and total due computed at the tenant's clock. Another tenant's id, or a loan of the other mode than the key's (DECISIONS.md \"Modes\"): 404. A dashboard session sees loans of both modes.",
    request: { params: LoanIdParamSchema, headers: BookmarkRequestHeadersSchema },
    responses: {
      200: { description: "The loan", headers: BookmarkResponseHeadersSchema, content: { "application/json": { schema: LoanSchema } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    // A poll that sends back the last answer's bookmark reads a replica at least that fresh; the first read, the primary.
    const session = readSessionsOf(deps)(freshAsClient(c.req.header(BOOKMARK_HEADER)));
    const loan = await loadLoan(session.db, tenant.id, c.req.valid("param").id, modeScope(principal));
    const view = await loanDetailView(session.db, loan, tenantClock(deps.clock, tenant, loan.mode).now());
    const bookmark = session.bookmark();
    return c.json(view, 200, bookmark ? { [BOOKMARK_HEADER]: bookmark } : {});
  });
