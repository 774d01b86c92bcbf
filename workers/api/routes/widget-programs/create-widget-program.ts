import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { createWidgetProgram } from "../../../../shared/widget-programs/widget-program-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { CreateWidgetProgramBodySchema } from "./schemas.ts";
import { WIDGET_PROGRAM_EXAMPLE } from "../../openapi-examples.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [403, 404] },
  {
    method: "post",
    path: "/v1/widget-programs",
    operationId: "widgetPrograms.create",
    tags: ["Merchant configuration"],
    summary: "Create a widget program",
    description: [
      "Creates a widget program with its own, freshly generated embed key. The program lends with the rail (network, stablecoin) and the active loan product of its merchant configuration, read through the configuration, so a later change of the configuration's rail changes the program's.",
      "`mode` is fixed for the program's life, as its embed key's prefix says: `sandbox` by default (`ek_test_…`, the rail's sandbox chain), or `live` (`ek_live_…`, the live chain) once the tenant is certified; before that, `live` answers 403 and creates nothing. A certified tenant keeps its sandbox programs and may make new ones.",
      "`merchantConfigId` must be one of the caller's configurations: an unknown id or another tenant's answers 404 `Merchant configuration not found`. A bad origin answers 400 naming it (`allowedOrigins.1: …`).",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: CreateWidgetProgramBodySchema, example: WIDGET_PROGRAM_EXAMPLE } } } },
    responses: { 201: { description: "Program created", content: { "application/json": { schema: WidgetProgramSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { tenant } = c.get("principal");
    const { db, clock } = c.get("deps");
    const { mode = "sandbox", ...terms } = c.req.valid("json");
    const program = await createWidgetProgram({ db }, { ...terms, tenantId: tenant.id, mode, now: clock.now() });
    return c.json(widgetProgramView(program, program), 201);
  });
