import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { RoleSchema } from "../../../../shared/schemas/auth.ts";
import { isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";
import { MerchantConfigSchema, merchantConfigView, WidgetProgramSchema, widgetProgramView } from "../../../../shared/schemas/merchant-config.ts";
import { principalEmailVerifiedRead } from "../../../../shared/auth/email-verification.ts";
import type { Caller } from "../../../../shared/auth/resolve-principal.ts";
import type { Db } from "../../../../db/create-db.ts";
import { describeTenant, tenantDescriptionReads } from "../../../../shared/tenants/describe-tenant.ts";
import type { AppEnv } from "../../context.ts";
import { callerReadsOf, defineRoute } from "../../route.ts";

const MeSchema = z
  .object({
    tenant: z.object({ id: z.uuid(), name: z.string(), mode: z.enum(TENANT_MODES), certifiedAt: TimestampSchema.nullable() }),
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

/**
 * Everything the answer reads besides the principal, in the same D1 round
 * trip as authentication: the tenant's configurations and programs, and
 * whose e-mail is verified.
 */
const meReads = (db: Db, caller: Caller) =>
  [
    ...tenantDescriptionReads(db, caller.tenantId),
    principalEmailVerifiedRead(db, caller.kind === "user" ? { kind: "user", userId: caller.userId } : { kind: "apiKey", tenantId: caller.tenantId }),
  ] as const;

export const route = defineRoute(
  { auth: "KEY_OR_JWT", callerReads: meReads },
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
    const [configs, programs, verified] = callerReadsOf(c, meReads);
    const described = describeTenant([configs, programs]);
    const emailVerified = Boolean(verified[0]?.verifiedAt);
    return c.json(
      {
        tenant: { id: tenant.id, name: tenant.name, mode: tenant.mode, certifiedAt: isoOrNull(tenant.certifiedAt) },
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
