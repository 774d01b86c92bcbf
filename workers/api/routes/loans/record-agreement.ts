import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { agreementOf, verifyLoanAgreement } from "../../../../shared/agreements/loan-agreements.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { TimestampSchema } from "../../../../shared/schemas/common.ts";
import { LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    walletSignature: z
      .string()
      .min(1)
      .max(8192)
      .openapi({ description: "EIP-191 personal_sign of the challenge message (0x + 130 hex); a smart-contract wallet's ERC-1271 or ERC-6492-wrapped signature where the chain can be asked" }),
    agreementChallengeId: z.string().min(1).max(64),
    agreementText: z.string().min(1).max(100_000).optional().openapi({ description: "The exact agreement text when you render the agreement yourself; kept immutably" }),
  })
  .openapi("AgreementRequest");

const ResponseSchema = z
  .object({
    agreement: z.object({
      id: z.uuid(),
      loanId: z.uuid(),
      challengeId: z.string(),
      walletAddress: z.string(),
      agreementText: z.string(),
      createdAt: TimestampSchema,
    }),
    loan: LoanSchema,
  })
  .openapi("Agreement");

export const route = defineRoute(
  { auth: "KEY", errors: [409] },
  {
    method: "post",
    path: "/v1/loans/{id}/agreement",
    tags: ["Loans"],
    summary: "Record the borrower's signed agreement",
    description:
      "Verifies the wallet's signature of the challenge message (EIP-191 on EVM chains; smart-contract wallets, ERC-1271 deployed or ERC-6492 counterfactual, on chains whose adapter can call the chain: the simulated sandbox chains execute no contracts, so there a contract wallet's signature is 400), consumes the single-use challenge (unexpired, unused, bound to this loan's terms; otherwise 400 naming the field), and keeps the exact agreement text immutably (`agreementText` when given, else the signed message). A second agreement never overwrites the first: 409. With `requiresKycBeforeFunding`, funding proceeds once KYC is confirmed too.",
    request: { params: LoanIdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 201: { description: "Agreement recorded", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, loans, challenges, clock, chain } = c.get("deps");
    const { tenant } = c.get("principal");
    const body = c.req.valid("json");
    const now = tenantClock(clock, tenant).now();
    const existing = await loadLoan(db, tenant.id, c.req.valid("param").id);
    const challenge = await verifyLoanAgreement(challenges, {
      loan: existing,
      challengeId: body.agreementChallengeId,
      walletSignature: body.walletSignature,
      now,
      chain,
    });
    const loan = await loans.run({
      kind: "agreement",
      tenantId: tenant.id,
      loanId: existing.id,
      challenge,
      walletSignature: body.walletSignature,
      agreementText: body.agreementText ?? null,
    });
    const agreement = await agreementOf(db, tenant.id, loan.id);
    return c.json({ agreement: { ...agreement, createdAt: agreement.createdAt.toISOString() }, loan: loanView(loan, tenantClock(clock, tenant).now()) }, 201);
  });
