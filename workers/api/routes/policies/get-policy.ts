import type { OpenAPIHono } from "@hono/zod-openapi";
import { PolicySchema, policyView, RULES_TEXT } from "../../../../shared/schemas/policy.ts";
import { currentPolicy } from "../../../../shared/underwriting/policies.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/policies",
    operationId: "policies.get",
    tags: ["Underwriting"],
    summary: "Get the underwriting policy",
    description: [
      "The tenant's current underwriting policy: its highest version. Signup stores version 1, the default policy, which approves every loan (no KYC requirement, no review threshold, no cap on open loans, no blocked wallets). Any dashboard role and any API key may read.",
      "Underwriting runs synchronously when a loan is created, with the policy version in force at that moment; the loan's `decision.policyVersion` names it. Every rule is evaluated, in this order, and every rule that fires adds a reason `{ code, message }`; any DECLINE rule makes the outcome DECLINED (a declined loan is never sent to review), otherwise a REVIEW rule makes it MANUAL_REVIEW, otherwise APPROVED:",
      RULES_TEXT,
    ].join("\n\n"),
    responses: { 200: { description: "The current policy", content: { "application/json": { schema: PolicySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const policy = await currentPolicy(c.get("deps").db, c.get("principal").tenant.id);
    return c.json(policyView(policy), 200);
  });
