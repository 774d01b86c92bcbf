import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { loanDetailView } from "../../../../shared/agreements/agreement-view.ts";
import { verifyLoanAgreement } from "../../../../shared/agreements/loan-agreements.ts";
import { apiAgreementDomains } from "../../../../shared/agreements/ton-connect-domains.ts";
import { DomainError } from "../../../../shared/domain/errors.ts";
import { modeScope } from "../../../../shared/auth/principal.ts";
import { loadLoan } from "../../../../shared/loans/load-loan.ts";
import { LoanAgreementSchema, LoanIdParamSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    walletSignature: z.string().min(1).max(8192).openapi({
      description:
        "The wallet's signature of the challenge message. EVM: EIP-191 personal_sign (0x + 130 hex), or a smart-contract wallet's ERC-1271 or ERC-6492-wrapped signature where the chain can be asked. Solana: ed25519 of the message's UTF-8 bytes, 64 bytes in base58 or base64. TON: the `signature` of a TON Connect signData reply with a `text` payload (base64), with publicKey, timestamp and domain.",
    }),
    agreementChallengeId: z.string().min(1).max(64),
    agreementText: z
      .string()
      .min(1)
      .max(100_000)
      .optional()
      .openapi({ description: "The exact agreement text when you render the agreement yourself; kept immutably" }),
    publicKey: z.string().min(1).max(128).optional().openapi({
      description:
        "TON (required there): the wallet's public key (hex, as TON Connect's `ton_addr` reply carries it, or base64); it must be the key of the loan's wallet (standard v4 or v5r1 wallet)",
    }),
    timestamp: z
      .number()
      .int()
      .optional()
      .openapi({ description: "TON (required there): the signData reply's `timestamp` (unix seconds); accepted up to 15 minutes old" }),
    domain: z.string().min(1).max(255).optional().openapi({
      description:
        "TON (required there): the signData reply's `domain`, the host of the TON Connect manifest of the page that asked for the signature. Allowed: the widget host, and the host of any allowed origin of your widget programs (add the origin of the page where you collect the signature to a program's `allowedOrigins`).",
    }),
  })
  .openapi("AgreementRequest");

const ResponseSchema = z
  .object({
    agreement: LoanAgreementSchema.extend({ loanId: z.uuid() }),
    loan: LoanSchema,
  })
  .openapi("Agreement");

export const route = defineRoute(
  { auth: "KEY", errors: [409, 503] },
  {
    method: "post",
    path: "/v1/loans/{id}/agreement",
    operationId: "loans.recordAgreement",
    tags: ["Loans"],
    summary: "Record the borrower's signed agreement",
    description:
      "Verifies the wallet's signature of the challenge message on the loan's chain: EIP-191 on EVM chains (smart-contract wallets, ERC-1271 deployed or ERC-6492 counterfactual, on chains whose adapter can call the chain: the simulated sandbox chains execute no contracts, so there a contract wallet's signature is 400; a chain that cannot be reached: 503 with Retry-After, the challenge unused), Solana ed25519, TON Connect signData text (with `publicKey`, `timestamp`, `domain`; the key must belong to the wallet, the domain must be the widget host or the host of one of your widget programs' allowed origins, the timestamp at most 15 minutes old). The single-use challenge (unexpired, unused, bound to this loan's terms; otherwise 400 naming the field) is consumed as soon as the signature verifies, whatever happens next. The agreement is kept immutably: the exact signed message, the signature (and the TON fields), and the agreement text (`agreementText` when given, else the signed message); the loan shows it as `agreement`. A second agreement never overwrites the first: 409. A loan declined since its challenge was issued: 409, the challenge unused. With `requiresKycBeforeFunding`, funding proceeds once KYC is confirmed too.",
    request: { params: LoanIdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 201: { description: "Agreement recorded", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, writer, challenges, clock, chain, widgetHost } = c.get("deps");
    const principal = c.get("principal");
    const { tenant } = principal;
    const body = c.req.valid("json");
    const existing = await loadLoan(db, tenant.id, c.req.valid("param").id, modeScope(principal));
    const ton = { publicKey: body.publicKey, timestamp: body.timestamp, domain: body.domain };
    const challenge = await verifyLoanAgreement(
      { challenges, chain },
      {
        loan: existing,
        challengeId: body.agreementChallengeId,
        walletSignature: body.walletSignature,
        ton,
        allowedDomains: await apiAgreementDomains(db, tenant.id, widgetHost),
        now: tenantClock(clock, tenant, existing.mode).now(),
        realNow: clock.now(),
      },
    );
    const loan = await writer.run({
      kind: "agreement",
      tenantId: tenant.id,
      loanId: existing.id,
      challenge,
      walletSignature: body.walletSignature,
      ton,
      agreementText: body.agreementText ?? null,
    });
    const view = await loanDetailView(db, loan, tenantClock(clock, tenant, loan.mode).now());
    if (!view.agreement) throw new DomainError("INTERNAL", "the recorded agreement was not found");
    return c.json({ agreement: { ...view.agreement, loanId: loan.id }, loan: view }, 201);
  });
