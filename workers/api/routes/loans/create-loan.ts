import type { OpenAPIHono } from "@hono/zod-openapi";
import { createLoan } from "../../../../shared/loans/create-loan.ts";
import { loanView } from "../../../../shared/loans/loan-view.ts";
import { CreateLoanSchema, LoanSchema } from "../../../../shared/schemas/loan.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { processCreatedLoan } from "../../../../shared/loans/loan-commands.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { LOAN_EXAMPLE } from "../../openapi-examples.ts";
import { deployedContracts } from "../../../../shared/chains/live/live-config.ts";

export const route = defineRoute(
  { auth: "KEY", errors: [403, 404] },
  {
    method: "post",
    path: "/v1/loans",
    operationId: "loans.create",
    tags: ["Loans"],
    summary: "Create a loan",
    description: [
      "Creates the loan (status CREATED, `loan.application_submitted`), underwrites it synchronously with the tenant's current policy (`loan.decision`), and, when APPROVED, funds it from the liquidity pool on the simulated chain of a sandbox tenant (`loan.funded`, status ACTIVE, `dueAt` = funding time + tenure). The response is the loan after all of that.",
      "Idempotency: one loan per (tenant, `idempotencyKey`), whatever the concurrency (a unique index decides). A repeated key answers **200** with the original loan (and its current state), even if the rest of the body differs; a new loan answers **201**. After a 5xx, retrying with the same key is safe: the loan continues where it stopped.",
      "Validation: `chain` must be the product rail's chain in the key's mode (DECISIONS.md \"Modes\"): a sandbox key (`svc_test_…`) lends only on sandbox chains and a live key (`svc_live_…`) only on live chains, 403 otherwise (a live chain without go-live certification: 403 too); the loan records `mode` from its chain; the address must be valid for the chain (stored canonical) and a borrower's: not the zero address, one of the service's own addresses on the chain, or one of the tenant's own wallets there (`/v1/wallets`, any role; 400 naming `borrowerWalletAddress`); `principalAmount` within the product's minimum and maximum (cap 1000.00); `tenureDays` among the product's. An unknown or another tenant's `loanProductId`: 404.",
      "Funding without enough pool headroom leaves the loan CREATED with `fundingState` AWAITING_LIQUIDITY and fires `loan.funding_failed` and `liquidity.unavailable`; it is funded when liquidity returns. A live loan is sent from the tenant's verified DISBURSEMENT wallet with an installed signer and reserves against that wallet's on-chain balance; without such a wallet, or when the wallet cannot pay the chain's gas minimum, it waits the same way (AWAITING_LIQUIDITY, nothing broadcast) and both events carry a `reason`. With the tenant setting `requiresKycBeforeFunding`, an approved loan waits (`fundingState` WAITING_KYC) for `kyc-confirmation` and `agreement`. Before it reserves anything, funding applies the decline rules about the borrower again (KYC_NOT_VERIFIED, WALLET_BLOCKED, LIVE_KYC_POLICY_REQUIRED) to the policy, settings and borrower as they are then: if one fires, the decision stays as recorded and funding is held (`fundingState` HELD, one `loan.funding_failed` whose `reason` and `reasons` name the rules) until it no longer fires.",
      "Collateral: no loan product takes collateral, on any chain (SPEC.md leaves it out on TON; on EVM it is not offered yet). Loans are unsecured: nothing is pledged at creation and nothing is seized at default; `loan.defaulted` records the default and the debt stays collectable (a later repayment recovers the loan to REPAID).",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: CreateLoanSchema, example: LOAN_EXAMPLE } } } },
    responses: {
      201: { description: "Loan created", content: { "application/json": { schema: LoanSchema } } },
      200: { description: "The loan this idempotencyKey created before", content: { "application/json": { schema: LoanSchema } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock, writer, liveChains } = c.get("deps");
    const principal = c.get("principal");
    const keyMode = principal.kind === "apiKey" ? principal.mode : undefined;
    // The tenant as authentication read it (this request's own lookup); creation reads its KYC setting with the rest.
    const { tenant } = principal;
    const tenantNow = () => tenantClock(clock, tenant, keyMode ?? tenant.mode).now();
    const body = c.req.valid("json");
    const deployed = deployedContracts(liveChains, body.chain);
    const { loan, created } = await createLoan({ db }, { ...body, keyMode, tenant, deployed, now: tenantNow() });
    const current = await processCreatedLoan({ db, writer }, { tenant, loan, created });
    return c.json(loanView(current, tenantNow()), created ? 201 : 200);
  });
