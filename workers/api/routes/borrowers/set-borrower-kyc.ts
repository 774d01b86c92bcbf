import type { OpenAPIHono } from "@hono/zod-openapi";
import { actingMode, ADMIN_ROLES, requireLiveWriterOnceCertified } from "../../../../shared/auth/principal.ts";
import { setBorrowerKyc } from "../../../../shared/borrowers/borrower-verbs.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { BorrowerParamSchema, BorrowerSchema, borrowerView, SetKycBodySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true, errors: [403, 409] },
  {
    method: "patch",
    path: "/v1/borrowers/{id}/kyc",
    operationId: "borrowers.setKyc",
    tags: ["Borrowers"],
    summary: "Record a borrower's KYC status",
    description: [
      "Records the outcome of your KYC check: `status` PENDING, VERIFIED or FAILED, and `merchantUserId`, your reference for who or what performed it. You are responsible for KYC/AML; the service keeps only the outcome and the reference.",
      "`{id}` is the borrower's id or your `borrowerRef` (URL-encoded): the id is tried first, then the ref, both within your tenant only. A ref the tenant has not used yet creates the borrower (so you may verify a borrower before its first loan); another tenant's borrower id is therefore never found, only treated as a new ref of yours.",
      "Every call stamps `verifiedAt` with the tenant's clock (the sandbox clock in sandbox), even when the status does not change, and appends one immutable audit record (from, to, `merchantUserId`, the calling API key, time) in the same database batch as the update; concurrent calls are applied one after the other, each with its own record. The audit trail cannot be edited or deleted.",
      "Underwriting reads the status when a loan is decided: with a policy that has `requireKycVerified`, loans of a borrower that is not VERIFIED are declined (`KYC_NOT_VERIFIED`). A change does not revisit decisions already made, but funding reads the status again before it sends anything: an approved loan not yet funded is held (`fundingState` HELD, `loan.funding_failed` naming `KYC_NOT_VERIFIED`) while its borrower is not VERIFIED under such a policy, or is FAILED while your settings require KYC before funding (`requiresKycBeforeFunding`).",
      "A status other than VERIFIED also withdraws your KYC confirmation of every widget credit line booked under this borrower (`POST /v1/credit-lines/:id/kyc-confirmation` with its `borrowerRef`): the widget's bootstrap says `requiresKyc` again and draws are refused (409) until you confirm the line again. Setting VERIFIED does not confirm a line by itself.",
      'Borrowers serve both modes (DECISIONS.md "Modes"): once the tenant is certified, a sandbox API key gets 403 here; set KYC with a live key or from the dashboard (an Owner or Admin session; a MEMBER: 403).',
    ].join("\n\n"),
    request: {
      params: BorrowerParamSchema,
      body: { required: true, content: { "application/json": { schema: SetKycBodySchema } } },
    },
    responses: { 200: { description: "The borrower with its updated KYC and audit trail", content: { "application/json": { schema: BorrowerSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    // Borrowers (and their KYC) serve both modes: after go-live a sandbox key may not change it.
    requireLiveWriterOnceCertified(principal, "A borrower's KYC status");
    const { db, clock } = c.get("deps");
    const body = c.req.valid("json");
    const saved = await setBorrowerKyc(
      { db },
      {
        tenantId: principal.tenant.id,
        idOrRef: c.req.valid("param").id,
        status: body.status,
        merchantUserId: body.merchantUserId,
        actor: principal.kind === "apiKey" ? `apiKey:${principal.apiKeyId}` : `user:${principal.userId}`,
        now: tenantClock(clock, principal.tenant, actingMode(principal)).now(),
      },
    );
    return c.json(borrowerView(saved), 200);
  });
