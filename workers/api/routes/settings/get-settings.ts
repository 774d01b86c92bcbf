import type { OpenAPIHono } from "@hono/zod-openapi";
import { SettingsSchema, settingsView } from "../../../../shared/schemas/settings.ts";
import { getTenantSettings } from "../../../../shared/settings/tenant-settings-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

export const route = defineRoute(
  { auth: "JWT" },
  {
    method: "get",
    path: "/v1/settings",
    operationId: "settings.get",
    tags: ["Merchant configuration"],
    summary: "Get the tenant settings",
    description:
      "The tenant's KYC policy (`requiresKycBeforeFunding`) and the branding the widget shows. Any dashboard role may read. A tenant that never saved settings reads as the defaults: no KYC gate, the tenant's name as `companyName`, every other branding field null, `updatedAt` null.",
    responses: { 200: { description: "The settings", content: { "application/json": { schema: SettingsSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const { tenant } = c.get("principal");
    const settings = await getTenantSettings(c.get("deps"), { tenantId: tenant.id, tenantName: tenant.name });
    return c.json(settingsView(settings), 200);
  });
