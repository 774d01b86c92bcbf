import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import { LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    verified: z.boolean(),
    merchantUserId: plainText(255).optional(),
    reference: plainText(255).optional().openapi({ description: "Your KYC provider's reference; the service stores no documents" }),
  })
  .openapi("LoanKycConfirmationRequest");

const ResponseSchema = z
  .object({
    loanId: z.uuid(),
    verified: z.boolean(),
    merchantUserId: z.string().nullable(),
    reference: z.string().nullable(),
    recordedAt: TimestampSchema,
    loan: LoanSchema,
  })
  .openapi("LoanKycConfirmation");

export const route = defineRoute(
  { auth: "KEY" },
  {
    method: "post",
    path: "/v1/loans/{id}/kyc-confirmation",
    operationId: "loans.confirmKyc",
    tags: ["Loans"],
    summary: "Confirm KYC for a loan",
    description:
      "Records the merchant backend's KYC confirmation for this loan (kept immutably). With the tenant setting `requiresKycBeforeFunding`, an approved API loan is funded once this (with `verified: true`) and the agreement are both recorded; `verified: false` closes the gate again for a loan not yet funded (the newest confirmation wins).",
    request: { params: LoanIdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 201: { description: "Confirmation recorded", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, writer, clock } = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const body = c.req.valid("json");
    const existing = await loadLoan(db, tenant.id, c.req.valid("param").id, modeScope(principal));
    const input = { verified: body.verified, merchantUserId: body.merchantUserId ?? null, reference: body.reference ?? null };
    const loan = await writer.run({ kind: "kycConfirmation", tenantId: tenant.id, loanId: existing.id, ...input });
    const now = tenantClock(clock, tenant, loan.mode).now();
    return c.json({ loanId: loan.id, ...input, recordedAt: now.toISOString(), loan: loanView(loan, now) }, 201);
  });
