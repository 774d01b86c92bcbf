import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageOf, PageQuerySchema } from "../../../../shared/schemas/common.ts";
import { WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { listWidgetPrograms } from "../../../../shared/widget-programs/widget-program-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/widget-programs",
    operationId: "widgetPrograms.list",
    tags: ["Merchant configuration"],
    summary: "List widget programs",
    description:
      "The tenant's widget programs, newest first, each with its embed key, rail and loan product (through its configuration) and allowed origins. Deleted programs are left out. Any dashboard role may read.",
    request: { query: PageQuerySchema },
    responses: {
      200: { description: "A page of programs", content: { "application/json": { schema: pageOf(WidgetProgramSchema) } } },
    },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const page = await listWidgetPrograms(c.get("deps"), { tenantId: c.get("principal").tenant.id, limit, cursor });
    return c.json({ data: page.data.map((p) => widgetProgramView(p, p)), nextCursor: page.nextCursor }, 200);
  });
