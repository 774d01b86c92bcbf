import type { OpenAPIHono } from "@hono/zod-openapi";
import { actingMode, ADMIN_ROLES, requireLiveWriterOnceCertified } from "../../../../shared/auth/principal.ts";
import { MAX_BLOCKED_WALLETS, PolicyBodySchema, PolicySchema, policyFromBody, policyView, RULES_TEXT } from "../../../../shared/schemas/policy.ts";
import { tenantClock } from "../../../../shared/tenants/tenant-context.ts";
import { putPolicy } from "../../../../shared/underwriting/policies.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { POLICY_EXAMPLE } from "../../openapi-examples.ts";

export const route = defineRoute(
  { auth: "KEY_OR_JWT", roles: ADMIN_ROLES, rolesAllowApiKey: true, errors: [403, 409] },
  {
    method: "put",
    path: "/v1/policies",
    operationId: "policies.put",
    tags: ["Underwriting"],
    summary: "Save a new policy version",
    description: [
      "Replaces the policy as a whole (every key is required) by storing a **new version**: the current version + 1. Versions are never edited or deleted, so every past decision keeps pointing at the exact policy that made it. Loans created from now on are decided with the new version; decisions already made are not revisited. Two PUTs at the same moment cannot take the same version: the loser gets 409 and may retry.",
      `\`manualReviewAbove\`: a decimal string with at most 2 decimals (a principal strictly above it goes to MANUAL_REVIEW) or null. \`maxOpenLoansPerBorrower\`: an integer from 1 to 1000 or null; open loans are the borrower's unpaid ones (CREATED and not declined, ACTIVE, DEFAULTED). \`blockedWallets\`: at most ${MAX_BLOCKED_WALLETS} addresses. A blocked wallet applies on every chain, so each entry is recognized by its address family (EVM \`0x…\`, then TON \`EQ…\`/\`UQ…\`/\`0:…\`, then Solana base58, the same checks as loan creation) and stored in that family's canonical form (EIP-55 checksum, TON raw \`0:<hex>\`, base58), deduplicated; a loan's wallet matches however either was typed. An entry no family accepts is a 400 naming \`blockedWallets.<index>\`.`,
      'One policy serves both modes (DECISIONS.md "Modes"): once the tenant is certified, a sandbox API key gets 403 here; change it with a live key or from the dashboard.',
      "Rules, in evaluation order:",
      RULES_TEXT,
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: PolicyBodySchema, example: POLICY_EXAMPLE } } } },
    responses: { 200: { description: "The new version", content: { "application/json": { schema: PolicySchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    // One policy serves both modes (DECISIONS.md "Modes"): after go-live a sandbox key may not change it.
    requireLiveWriterOnceCertified(principal, "The underwriting policy");
    const { db, clock } = c.get("deps");
    const saved = await putPolicy(
      { db },
      {
        tenantId: principal.tenant.id,
        policy: policyFromBody(c.req.valid("json")),
        actor: principal.kind === "apiKey" ? `apiKey:${principal.apiKeyId}` : `user:${principal.userId}`,
        now: tenantClock(clock, principal.tenant, actingMode(principal)).now(),
      },
    );
    return c.json(policyView(saved), 200);
  });
