import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { IdParamSchema } from "../../../../shared/schemas/common.ts";
import { deleteWidgetProgram } from "../../../../shared/widget-programs/widget-program-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "delete",
    path: "/v1/widget-programs/{id}",
    operationId: "widgetPrograms.delete",
    tags: ["Merchant configuration"],
    summary: "Delete a widget program",
    description:
      "Soft-deletes the program: its record stays for the loans that reference it, but its embed key answers 404 from then on, and it disappears from `GET /v1/widget-programs`, `GET /v1/widget-programs/{id}` (404) and `GET /v1/me`. Deleting it again, or another tenant's id: 404.",
    request: { params: IdParamSchema },
    responses: { 204: { description: "Program deleted" } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { db, clock } = c.get("deps");
    await deleteWidgetProgram({ db }, { tenantId: c.get("principal").tenant.id, id: c.req.valid("param").id, now: clock.now() });
    return c.body(null, 204);
  });
