import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES, actingMode } from "../../../../shared/auth/principal.ts";
import { updateMerchantConfig } from "../../../../shared/merchant-config/save-merchant-config.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { MerchantConfigSchema, merchantConfigView } from "../../../../shared/schemas/merchant-config.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { MerchantConfigBodySchema, termsFromBody } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "put",
    path: "/v1/merchant-configs/{id}",
    operationId: "merchantConfigs.update",
    tags: ["Merchant configuration"],
    summary: "Replace a merchant configuration's terms",
    description: [
      "Replaces the terms as a whole (same body and rules as POST; every field required). The active loan product keeps its id (`loanProductId` is unchanged) and is synchronized in the same write: rail, tenures, ticket limits, grace and fees.",
      "Changing the rail changes the rail of every widget program on this configuration: programs read network and stablecoin through their configuration. Changes apply at once to the widget and to loans created by API.",
      "Another tenant's id: 404.",
    ].join("\n\n"),
    request: {
      params: IdParamSchema,
      body: { required: true, content: { "application/json": { schema: MerchantConfigBodySchema } } },
    },
    responses: { 200: { description: "The saved configuration", content: { "application/json": { schema: MerchantConfigSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { tenant } = principal;
    const { db, clock } = c.get("deps");
    const row = await updateMerchantConfig(
      { db },
      {
        tenantId: tenant.id,
        id: c.req.valid("param").id,
        terms: termsFromBody(c.req.valid("json")),
        now: clock.now(),
      },
    );
    return c.json(merchantConfigView(row, actingMode(principal)), 200);
  });
