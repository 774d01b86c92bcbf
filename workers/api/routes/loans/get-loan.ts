import type { OpenAPIHono } from "@hono/zod-openapi";
import { loanDetailView } from "../../../../shared/agreements/agreement-view.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
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
    request: { params: LoanIdParamSchema },
    responses: { 200: { description: "The loan", content: { "application/json": { schema: LoanSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const loan = await loadLoan(db, tenant.id, c.req.valid("param").id, modeScope(principal));
    return c.json(await loanDetailView(db, loan, tenantClock(clock, tenant, loan.mode).now()), 200);
  });
