import type { OpenAPIHono } from "@hono/zod-openapi";
import { decideKyb, OPERATOR_ACTOR } from "../../../../shared/go-live/operator-verbs.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { auditView, KybDecisionBodySchema, OperatorAuditEntrySchema } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "OPERATOR", errors: [409] },
  {
    method: "post",
    path: "/v1/operator/tenants/{id}/kyb",
    operationId: "operator.tenants.decideKyb",
    tags: ["Platform operator"],
    summary: "Decide a tenant's KYB",
    description:
      "APPROVED or REJECTED, with a note, on the tenant's newest KYB submission, which must be SUBMITTED (409 otherwise; 404 for an unknown tenant). Send `kybId`, the submission you reviewed, so a resubmission made while you reviewed is not decided in its place (409). The decision and its audit entry are written together; the tenant sees the entry in GET /v1/go-live.",
    request: {
      params: IdParamSchema,
      body: {
        required: true,
        content: {
          "application/json": {
            schema: KybDecisionBodySchema,
            example: { decision: "APPROVED", note: "Registry extract checked", kybId: "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b" },
          },
        },
      },
    },
    responses: { 200: { description: "Decided; the audit entry written", content: { "application/json": { schema: OperatorAuditEntrySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const { decision, note, kybId } = c.req.valid("json");
    const result = await decideKyb({ db }, { tenantId: c.req.valid("param").id, decision, note: note ?? null, kybId, actor: OPERATOR_ACTOR, now: clock.now() });
    return c.json(auditView(result.audit), 200);
  });
