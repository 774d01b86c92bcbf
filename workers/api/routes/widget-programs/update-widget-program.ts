import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { updateWidgetProgram } from "../../../../shared/widget-programs/widget-program-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { WidgetProgramBodySchema } from "./schemas.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "put",
    path: "/v1/widget-programs/{id}",
    operationId: "widgetPrograms.update",
    tags: ["Merchant configuration"],
    summary: "Replace a widget program",
    description: [
      "Replaces the program's `name`, `merchantConfigId` and `allowedOrigins` (all required). The embed key never changes, so embedded widgets keep working; moving the program to another configuration moves it to that configuration's rail and loan product. Changes apply at once.",
      "A deleted program or another tenant's id: 404 `Widget program not found`; a `merchantConfigId` that is not one of the caller's configurations: 404 `Merchant configuration not found`.",
    ].join("\n\n"),
    request: {
      params: IdParamSchema,
      body: { required: true, content: { "application/json": { schema: WidgetProgramBodySchema } } },
    },
    responses: { 200: { description: "The saved program", content: { "application/json": { schema: WidgetProgramSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    const program = await updateWidgetProgram(
      { db },
      {
        ...c.req.valid("json"),
        tenantId: c.get("principal").tenant.id,
        id: c.req.valid("param").id,
        now: clock.now(),
      },
    );
    return c.json(widgetProgramView(program, program), 200);
  });
