import type { OpenAPIHono } from "@hono/zod-openapi";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { getWidgetProgram } from "../../../../shared/widget-programs/widget-program-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/widget-programs/{id}",
    operationId: "widgetPrograms.get",
    tags: ["Merchant configuration"],
    summary: "Get a widget program",
    description: "One widget program. Any dashboard role may read. A deleted program or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 200: { description: "The program", content: { "application/json": { schema: WidgetProgramSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const program = await getWidgetProgram(c.get("deps"), { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id });
    return c.json(widgetProgramView(program, program), 200);
  });
