import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { issueLoanChallenge } from "../../../../shared/agreements/loan-agreements.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import { LoanIdParamSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const ResponseSchema = z
  .object({
    id: z.uuid(),
    message: z.string().openapi({ description: "The text the borrower's wallet signs (EIP-191 personal_sign on EVM chains)" }),
    expiresAt: TimestampSchema,
  })
  .openapi("AgreementChallenge");

export const route = defineRoute(
  { auth: "KEY", errors: [409] },
  {
    method: "post",
    path: "/v1/loans/{id}/agreement-challenge",
    operationId: "loans.agreementChallenge",
    tags: ["Loans"],
    summary: "Issue an agreement challenge",
    description:
      "A single-use challenge bound to the loan's wallet, tenant, amount, tenure, chain and stablecoin, valid 5 minutes on the tenant's clock, served by a Durable Object so that two uses race to exactly one. Only before funding (409 otherwise), for a loan that was not declined (by underwriting or a review's REJECT: it is never funded, 409), and while no agreement is on file (409).",
    request: { params: LoanIdParamSchema },
    responses: { 201: { description: "Challenge issued", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, challenges, clock } = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const loan = await loadLoan(db, tenant.id, c.req.valid("param").id, modeScope(principal));
    const challenge = await issueLoanChallenge({ db, challenges }, { loan, tenantName: tenant.name, now: tenantClock(clock, tenant, loan.mode).now() });
    return c.json({ id: challenge.id, message: challenge.message, expiresAt: new Date(challenge.expiresAt).toISOString() }, 201);
  });
