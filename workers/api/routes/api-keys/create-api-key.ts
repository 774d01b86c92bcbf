import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { plainText } from "../../../../shared/schemas/plain-text.ts";
import { createApiKey } from "../../../../shared/api-keys/api-key-verbs.ts";
import { ADMIN_ROLES } from "../../../../shared/auth/principal.ts";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { iso, TimestampSchema } from "../../../../shared/schemas/common.ts";
import type { AppEnv } from "../../context.ts";
import { defineRoute } from "../../route.ts";
import { API_KEY_EXAMPLE } from "../../openapi-examples.ts";

const BodySchema = z
  .object({
    name: plainText(100),
    // Optional rather than defaulted, so the document (and typed clients) do not require it.
    mode: z.enum(TENANT_MODES).optional().openapi({
      description: "sandbox (default, a `svc_test_…` key) or live (a `svc_live_…` key; 403 until the tenant is certified).",
    }),
  })
  .openapi("CreateApiKeyRequest");
const ResponseSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    key: z.string().openapi({ description: "The secret. Shown in this response only; store it now." }),
    prefix: z.string(),
    mode: z.enum(TENANT_MODES),
    createdAt: TimestampSchema,
  })
  .openapi("CreatedApiKey");

export const route = defineRoute(
  { auth: "JWT", roles: ADMIN_ROLES, errors: [403, 409] },
  {
    method: "post",
    path: "/v1/api-keys",
    operationId: "apiKeys.create",
    tags: ["Dashboard identity"],
    summary: "Create an API key",
    description:
      "Creates a key for the merchant's backend (`x-api-key`) in a mode (DECISIONS.md \"Modes\"): `sandbox` (default) reads `svc_test_…` and acts on sandbox chains and helpers only; `live` reads `svc_live_…`, acts on live chains only, and is refused (403) until the tenant is certified (`certifiedAt`). Each key sees only its own mode's loans, events, settlements and notifications. The key is returned once, in this response; only its SHA-256 is stored. A tenant holds at most 20 unrevoked keys: the 21st gets 409 (revoke one first). Requests are limited per key and, over all keys and users of the tenant together, per tenant.",
    request: { body: { required: true, content: { "application/json": { schema: BodySchema, example: API_KEY_EXAMPLE } } } },
    responses: { 201: { description: "Key created", content: { "application/json": { schema: ResponseSchema } } } },
  },
);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const principal = c.get("principal");
    const { db, clock } = c.get("deps");
    const body = c.req.valid("json");
    const created = await createApiKey(
      { db },
      {
        tenantId: principal.tenant.id,
        mode: body.mode ?? "sandbox",
        name: body.name,
        createdByUserId: principal.kind === "user" ? principal.userId : null,
        now: clock.now(),
      },
    );
    return c.json({ id: created.id, name: created.name, key: created.key, prefix: created.prefix, mode: created.mode, createdAt: iso(created.createdAt) }, 201);
  });
