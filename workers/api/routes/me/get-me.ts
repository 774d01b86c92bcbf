import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { RoleSchema } from "../../../../shared/schemas/auth.ts";
import { isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { MerchantConfigSchema, merchantConfigView, WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { callerEmailVerified, describedTenant } from "../../../../shared/tenants/description-cache.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";

const MeSchema = z
  .object({
    tenant: z.object({
      id: z.uuid(),
      name: z.string(),
      mode: z.enum(TENANT_MODES),
      certifiedAt: TimestampSchema.nullable(),
      liveEnabledAt: TimestampSchema.nullable().openapi({ description: 'When live was enabled: `certifiedAt` (DECISIONS.md "Modes"); null while in sandbox.' }),
    }),
    mode: z.enum(TENANT_MODES).openapi({
      description:
        "The mode this credential acts in (DECISIONS.md \"Modes\"): an API key's own (`svc_test_…` sandbox, `svc_live_…` live); for a dashboard session, which sees both, the tenant's (`tenant.mode`: sandbox until certified, then live).",
    }),
    principal: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("apiKey"), apiKeyId: z.uuid(), mode: z.enum(TENANT_MODES) }),
      z.object({ kind: z.literal("user"), userId: z.uuid(), email: z.string(), role: RoleSchema }),
    ]),
    merchantConfigs: z.array(MerchantConfigSchema),
    widgetPrograms: z.array(WidgetProgramSchema),
    emailVerified: z.boolean().openapi({
      description:
        "Whether the e-mail address has been verified (a link from `POST /v1/auth/verify-email`): for a dashboard session the user's own, for an API key the tenant owner's, the address notification e-mail goes to. Until it is, no notification e-mail is sent.",
    }),
  })
  .openapi("Me");

export const route = defineRoute(
  { auth: "KEY_OR_JWT" },
  {
    method: "get",
    path: "/v1/me",
    operationId: "me.get",
    tags: ["Dashboard identity"],
    summary: "The calling tenant",
    description:
      "The tenant behind the credential with its status (`tenant.mode`: `sandbox` until certified, then `live`), the mode this credential acts in (`mode`: an API key's own), who is calling, its merchant configurations with their `loanProductId`, its widget programs with their `embedKey`, and `emailVerified`.",
    responses: { 200: { description: "The tenant", content: { "application/json": { schema: MeSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { tenant } = principal;
    const mode = principal.kind === "apiKey" ? principal.mode : tenant.mode;
    // Authentication read the description's version; the isolate's copy at that version needs no read (shared/tenants/description-cache.ts).
    const described = await describedTenant(c.get("deps").db, tenant.id, tenant.descriptionVersion);
    const emailVerified = callerEmailVerified(described, principal);
    return c.json(
      {
        tenant: {
          id: tenant.id,
          name: tenant.name,
          mode: tenant.mode,
          certifiedAt: isoOrNull(tenant.certifiedAt),
          liveEnabledAt: isoOrNull(tenant.certifiedAt),
        },
        mode,
        principal:
          principal.kind === "apiKey"
            ? { kind: "apiKey" as const, apiKeyId: principal.apiKeyId, mode: principal.mode }
            : { kind: "user" as const, userId: principal.userId, email: principal.email, role: principal.role },
        merchantConfigs: described.merchantConfigs.map((mc) => merchantConfigView(mc, mode)),
        widgetPrograms: described.widgetPrograms.map((p) => widgetProgramView(p.program, p)),
        emailVerified,
      },
      200,
    );
  });
