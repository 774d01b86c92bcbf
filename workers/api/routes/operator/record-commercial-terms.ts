import type { OpenAPIHono } from "@hono/zod-openapi";
import { OPERATOR_ACTOR, recordCommercialTerms } from "../../../../shared/go-live/operator-verbs.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { auditView, CommercialTermsBodySchema, OperatorAuditEntrySchema } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "OPERATOR" },
  {
    method: "post",
    path: "/v1/operator/tenants/{id}/commercial-terms",
    operationId: "operator.tenants.recordCommercialTerms",
    tags: ["Platform operator"],
    summary: "Record a tenant's commercial terms",
    description:
      "Records that commercial terms were agreed with the tenant (go-live step 2): the signed agreement's `reference` and a note. Append-only: a later agreement is a new entry. Written with its audit entry, which the tenant sees in GET /v1/go-live. 404 for an unknown tenant.",
    request: {
      params: IdParamSchema,
      body: {
        required: true,
        content: { "application/json": { schema: CommercialTermsBodySchema, example: { reference: "MSA-2026-014", note: "Signed by both parties" } } },
      },
    },
    responses: { 201: { description: "Recorded; the audit entry written", content: { "application/json": { schema: OperatorAuditEntrySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const { reference, note } = c.req.valid("json");
    const result = await recordCommercialTerms(
      { db },
      { tenantId: c.req.valid("param").id, reference, note: note ?? null, actor: OPERATOR_ACTOR, now: clock.now() },
    );
    return c.json(auditView(result.audit), 201);
  });
