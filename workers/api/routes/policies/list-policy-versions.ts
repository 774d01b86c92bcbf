import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { PolicySchema, policyView } from "../../../../shared/schemas/policy.ts";
import { listPolicyVersions } from "../../../../shared/underwriting/policies.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const PolicyVersionSchema = PolicySchema.extend({
  createdBy: z.string().openapi({
    description: "Who saved this version: `user:<userId>` (the dashboard), `apiKey:<apiKeyId>`, or `system:signup` for version 1.",
    example: "user:6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5",
  }),
}).openapi("PolicyVersion");

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/policies/versions",
    operationId: "policies.listVersions",
    tags: ["Underwriting"],
    summary: "List the underwriting policy's versions",
    description:
      "Every version of the tenant's underwriting policy, newest first, with who saved it and when: the history behind each loan's `decision.policyVersion`. Versions are never changed or removed; `GET /v1/policies` is the newest. Any dashboard role and any API key may read.",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of versions", content: { "application/json": { schema: pageOf(PolicyVersionSchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await listPolicyVersions(c.get("deps").db, { tenantId: c.get("principal").tenant.id, limit, cursor });
    return c.json({ data: page.data.map((v) => ({ ...policyView(v), createdBy: v.createdBy })), nextCursor: page.nextCursor }, 200);
  });
