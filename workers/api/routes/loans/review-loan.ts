import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    action: z.enum(["APPROVE", "REJECT"]),
    note: z.string().max(2000).nullable().optional().openapi({ description: "The reviewer's note, kept on the decision" }),
  })
  .openapi("ReviewRequest");

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [409] },
  {
    method: "post",
    path: "/v1/loans/{id}/review",
    operationId: "loans.review",
    tags: ["Loans"],
    summary: "Review a loan in manual review",
    description:
      "An ops reviewer actions a MANUAL_REVIEW loan. APPROVE: outcome APPROVED, `loan.approved`, then funding proceeds. REJECT: outcome DECLINED (the loan shows under DECLINED), `loan.rejected`, no funds move. A loan that is not in manual review, or a second review: 409. Funding applies the decline rules about the borrower again before it reserves: an approved loan whose borrower's KYC is no longer what the policy requires, or whose wallet was blocked since the application, is held (`fundingState` HELD, `loan.funding_failed` naming why) until that is fixed. The decision records `reviewedBy`, `reviewedAt` and `reviewNote`.",
    request: { params: LoanIdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 200: { description: "The reviewed loan", content: { "application/json": { schema: LoanSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw new Error("unreachable: JWT route");
    const { writer, clock } = c.get("deps");
    const body = c.req.valid("json");
    const loan = await writer.run({
      kind: "review",
      tenantId: principal.tenant.id,
      loanId: c.req.valid("param").id,
      action: body.action,
      note: body.note ?? null,
      reviewerUserId: principal.userId,
    });
    return c.json(loanView(loan, tenantClock(clock, principal.tenant, loan.mode).now()), 200);
  });
