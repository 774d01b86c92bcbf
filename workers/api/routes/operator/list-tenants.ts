import type { OpenAPIHono } from "@hono/zod-openapi";
import { listOperatorTenants } from "../../../../shared/go-live/operator-verbs.ts";
import { iso, isoOrNull, PageQuerySchema, pageOf } from "../../../../shared/schemas/common.ts";
import { kybView, OperatorTenantSchema } from "../../../../shared/schemas/go-live.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "OPERATOR" },
  {
    method: "get",
    path: "/v1/operator/tenants",
    operationId: "operator.tenants.list",
    tags: ["Platform operator"],
    summary: "List tenants with their KYB and certification",
    description:
      "Every tenant, newest first, with its newest KYB submission (`kybStatus` SUBMITTED, APPROVED or REJECTED; null when none) and `certifiedAt`: the operator's review queue.",
    request: { query: PageQuerySchema },
    responses: { 200: { description: "A page of tenants", content: { "application/json": { schema: pageOf(OperatorTenantSchema) } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db } = c.get("deps");
    const page = await listOperatorTenants({ db }, c.req.valid("query"));
    return c.json(
      {
        data: page.data.map(({ tenant, kyb, kybMatches }) => ({
          id: tenant.id,
          name: tenant.name,
          mode: tenant.mode,
          certifiedAt: isoOrNull(tenant.certifiedAt),
          liveEnabledAt: isoOrNull(tenant.certifiedAt),
          kybStatus: kyb?.status ?? null,
          kyb: kyb ? kybView(kyb) : null,
          kybMatches,
          createdAt: iso(tenant.createdAt),
        })),
        nextCursor: page.nextCursor,
      },
      200,
    );
  });
