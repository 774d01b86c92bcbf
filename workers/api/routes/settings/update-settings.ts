import type { OpenAPIHono } from "@hono/zod-openapi";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { SettingsBodySchema, SettingsSchema, settingsView } from "../../../../shared/schemas/settings.ts";
import { replaceTenantSettings } from "../../../../shared/settings/tenant-settings-verbs.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { SETTINGS_EXAMPLE } from "../../openapi-examples.ts";

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES },
  {
    method: "put",
    path: "/v1/settings",
    operationId: "settings.put",
    tags: ["Merchant configuration"],
    summary: "Replace the tenant settings",
    description: [
      "Replaces the settings as a whole: every key is required. `branding.companyName` is 1 to 200 characters; the other branding fields are nullable and `null` clears them.",
      "`logoUrl` and `termsUrl` must be https URLs of at most 2048 characters (no `javascript:`, `data:` or `http:`, no credentials, no spaces); `primaryColor` must be `#RRGGBB` (stored as sent); `supportEmail` an e-mail address.",
      "Each bad field is named in the 400's `message` array (`branding.primaryColor: …`). Changes apply at once to the widget.",
    ].join("\n\n"),
    request: { body: { required: true, content: { "application/json": { schema: SettingsBodySchema, example: SETTINGS_EXAMPLE } } } },
    responses: { 200: { description: "The saved settings", content: { "application/json": { schema: SettingsSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const { db, clock } = c.get("deps");
    const saved = await replaceTenantSettings({ db }, { tenantId: c.get("principal").tenant.id, ...body, now: clock.now() });
    return c.json(settingsView(saved), 200);
  });
