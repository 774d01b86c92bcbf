import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { LoanSchema } from "../../../../shared/schemas/loan.ts";
import { attributeUnmatched } from "../../../../shared/settlement/unmatched-verbs.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { UnmatchedSchema, unmatchedView } from "./unmatched-schemas.ts";

const BodySchema = z.object({ loanId: z.uuid() }).openapi("AttributeRequest");

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "post",
    path: "/v1/settlements/unmatched/{id}/attribute",
    operationId: "settlements.unmatched.attribute",
    tags: ["Repayment"],
    summary: "Attribute an unmatched payment to a loan",
    description:
      "An Owner/Admin applies a kept payment to one of the tenant's ACTIVE or DEFAULTED loans on the same chain (a loan on another chain: 400; not ACTIVE or DEFAULTED, or already attributed: 409). It counts like a payment the listener matched: full, partial or with surplus, with `loan.repaid` when it settles the loan. A payment credits at most one loan: of concurrent attributions one wins, the others get 409 and nothing moves.",
    request: { params: IdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: {
      200: {
        description: "The attributed payment and the loan after it",
        content: { "application/json": { schema: z.object({ unmatched: UnmatchedSchema, loan: LoanSchema }) } },
      },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const { db, writer, clock } = c.get("deps");
    const result = await attributeUnmatched(
      { db, writer },
      {
        tenantId: principal.tenant.id,
        id: c.req.valid("param").id,
        loanId: c.req.valid("json").loanId,
        by: `user:${principal.userId}`,
      },
    );
    return c.json(
      {
        unmatched: unmatchedView(result.unmatched, c.get("deps").liveChains),
        loan: loanView(result.loan, tenantClock(clock, principal.tenant, result.loan.mode).now()),
      },
      200,
    );
  });
