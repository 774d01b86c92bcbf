import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import { actingMode, modeScope, sandboxKeyOnceCertified } from "../../../../shared/auth/principal.ts";
import { confirmCreditLineKyc } from "../../../../shared/embed/credit-lines.ts";
import { IdParamSchema, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { KycStatusSchema } from "../borrowers/schemas.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const BodySchema = z
  .object({
    verified: z.boolean(),
    merchantUserId: plainText(255).optional(),
    reference: plainText(255).optional(),
    borrowerRef: plainText(255).optional().openapi({
      description:
        "Your reference for this borrower: the line's loans are booked under it (plain text: no control, invisible or bidirectional formatting characters, no line separators)",
    }),
  })
  .openapi("CreditLineKycConfirmationRequest");

const ResponseSchema = z
  .object({
    id: z.uuid(),
    walletAddress: z.string(),
    borrowerRef: z.string(),
    kycConfirmedAt: TimestampSchema.nullable(),
    requiresKyc: z.boolean(),
    borrowerKycStatus: KycStatusSchema.nullable().openapi({
      description:
        "The KYC status of the borrower the line's loans are booked under (`borrowerRef`), after this call: VERIFIED or FAILED as confirmed, except with a sandbox key once the tenant is certified, which leaves it as it was (null: no such borrower yet)",
    }),
  })
  .openapi("CreditLineKycConfirmation");

export const route = defineRoute(
  { auth: "KEY", errors: [403, 409] },
  {
    method: "post",
    path: "/v1/credit-lines/{id}/kyc-confirmation",
    operationId: "creditLines.confirmKyc",
    tags: ["Embed and widget"],
    summary: "Confirm KYC for a widget borrower",
    description:
      "How the merchant's backend confirms KYC for a widget borrower's credit line (the id the widget posts in `svc:kyc-required`): with `verified: true` the line stops requiring KYC (bootstrap answers `requiresKyc: false` and the widget resumes), and the borrower (`borrowerRef`, or the line's `wallet:<address>`) is recorded VERIFIED with its audit row. `verified: false` requires KYC again. Another tenant's line: 404. Changing `borrowerRef` after the line has drawn: 409. Modes (DECISIONS.md \"Modes\"): a key confirms only lines of widget programs of its own mode (another mode's line: 404). Once the tenant is certified, a sandbox key still confirms its sandbox lines, but no longer sets the borrower's KYC: that status is shared by both modes and live loans depend on it, so only a live key or the dashboard changes it (`PATCH /v1/borrowers/{id}/kyc`). Then, if the policy requires VERIFIED KYC, a sandbox draw of a borrower that is not VERIFIED is declined by underwriting (`KYC_NOT_VERIFIED`) until the borrower is verified that way; `borrowerKycStatus` says where it stands",
    request: { params: IdParamSchema, body: { required: true, content: { "application/json": { schema: BodySchema } } } },
    responses: { 200: { description: "The credit line's KYC", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { db, clock } = c.get("deps");
    const body = c.req.valid("json");
    const { line, borrowerKycStatus } = await confirmCreditLineKyc(
      { db },
      {
        tenantId: principal.tenant.id,
        mode: modeScope(principal) ?? undefined,
        id: c.req.valid("param").id,
        verified: body.verified,
        merchantUserId: body.merchantUserId ?? null,
        reference: body.reference ?? null,
        borrowerRef: body.borrowerRef ?? null,
        actor: principal.kind === "apiKey" ? `apiKey:${principal.apiKeyId}` : `user:${principal.userId}`,
        now: tenantClock(clock, principal.tenant, actingMode(principal)).now(),
        // The borrower's KYC, which both modes share: after go-live, not by a sandbox key (it confirms the sandbox line only).
        setsBorrowerKyc: !sandboxKeyOnceCertified(principal),
      },
    );
    return c.json(
      {
        id: line.id,
        walletAddress: line.walletAddress,
        borrowerRef: line.borrowerRef,
        kycConfirmedAt: line.kycConfirmedAt?.toISOString() ?? null,
        requiresKyc: line.kycConfirmedAt === null,
        borrowerKycStatus,
      },
      200,
    );
  });
