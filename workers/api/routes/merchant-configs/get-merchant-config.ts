import type { OpenAPIHono } from "@hono/zod-openapi";
import { actingMode } from "../../../../shared/auth/principal.ts";
import { getMerchantConfig } from "../../../../shared/merchant-config/read-merchant-configs.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { MerchantConfigSchema, merchantConfigView } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/merchant-configs/{id}",
    operationId: "merchantConfigs.get",
    tags: ["Merchant configuration"],
    summary: "Get a merchant configuration",
    description: "One configuration with its active `loanProductId`. Any dashboard role may read. Another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The configuration", content: { "application/json": { schema: MerchantConfigSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { tenant } = principal;
    const row = await getMerchantConfig(c.get("deps"), { tenantId: tenant.id, id: c.req.valid("param").id });
    return c.json(merchantConfigView(row, actingMode(principal)), 200);
  });
