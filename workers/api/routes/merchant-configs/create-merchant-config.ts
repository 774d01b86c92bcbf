import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, actingMode } from "../../../../shared/auth/principal.ts";
import { createMerchantConfig } from "../../../../shared/merchant-config/save-merchant-config.ts";
import { MerchantConfigSchema, merchantConfigView } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { MerchantConfigBodySchema, termsFromBody } from "./schemas.ts";
import { MERCHANT_CONFIG_EXAMPLE } from "../../openapi-examples.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "post",
    path: "/v1/merchant-configs",
    operationId: "merchantConfigs.create",
    tags: ["Merchant configuration"],
    summary: "Create a merchant configuration",
    description: [
      "Creates a configuration with exactly one rail (TON/USDT, POLYGON/USDC or BASE/USDC) and, in the same write, its active loan product, whose id is returned as `loanProductId`. Two rails live at once need two configurations.",
      "Rules: `tenures` a non-empty subset of 3, 7, 15 without repeats; `minTicket` > 0 and ≤ `maxTicket` ≤ 1000.00; `gracePeriodDays` 0 to 30; a PERCENTAGE fee at most 100, a FIXED fee at most 1000.00. Amounts are decimal strings with at most 2 decimals.",
      "A 400 names every bad field in `message`; shape errors (types, missing fields, enums) are reported first, the cross-field rules once the shapes are valid.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: MerchantConfigBodySchema, example: MERCHANT_CONFIG_EXAMPLE } } } },
    responses: { 201: { description: "Configuration created", content: { "application/json": { schema: MerchantConfigSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { tenant } = principal;
    const { db, clock } = c.get("deps");
    const row = await createMerchantConfig({ db }, { tenantId: tenant.id, terms: termsFromBody(c.req.valid("json")), now: clock.now() });
    return c.json(merchantConfigView(row, actingMode(principal)), 201);
  });
