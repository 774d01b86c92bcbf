import type { OpenAPIHono } from "@hono/zod-openapi";
import { actingMode } from "../../../../shared/auth/principal.ts";
import { listMerchantConfigs } from "../../../../shared/merchant-config/read-merchant-configs.ts";
import { pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { MerchantConfigSchema, merchantConfigView } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/merchant-configs",
    operationId: "merchantConfigs.list",
    tags: ["Merchant configuration"],
    summary: "List merchant configurations",
    description:
      "The tenant's merchant configurations, newest first, each with its rail, the chain it lends on in the tenant's mode, its limits and pricing, and its active `loanProductId`. Any dashboard role may read.",
    request: { query: PageQuerySchema },
    responses: {
      200: { description: "A page of configurations", content: { "application/json": { schema: pageOf(MerchantConfigSchema) } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const principal = c.get("principal");
    const { tenant } = principal;
    const page = await listMerchantConfigs(c.get("deps"), { tenantId: tenant.id, limit, cursor });
    return c.json({ data: page.data.map((row) => merchantConfigView(row, actingMode(principal))), nextCursor: page.nextCursor }, 200);
  });
