import { z } from "@hono/zod-openapi";
import type { ListedApiKey } from "../../../../shared/api-keys/api-key-verbs.ts";
import { TENANT_MODES } from "../../../../shared/domain/rails.ts";
import { iso, isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The key's first characters, to tell keys apart.", example: "svc_test_3kT9" }),
    mode: z.enum(TENANT_MODES).openapi({ description: "What the key acts in: sandbox (`svc_test_…`) or live (`svc_live_…`)." }),
    createdAt: TimestampSchema,
    revokedAt: TimestampSchema.nullable(),
    createdBy: z
      .object({ userId: z.uuid(), email: z.string().openapi({ example: "admin@merchant.example" }) })
      .nullable()
      .openapi({
        description:
          "The dashboard user of this tenant who created the key, with their current e-mail; null when that user has since been removed (`DELETE /v1/users/:id`) or when no dashboard user created it.",
      }),
  })
  .openapi("ApiKey");

export const apiKeyView = (k: ListedApiKey) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  mode: k.mode,
  createdAt: iso(k.createdAt),
  revokedAt: isoOrNull(k.revokedAt),
  createdBy: k.createdBy,
});
