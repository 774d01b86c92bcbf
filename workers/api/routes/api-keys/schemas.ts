import { z } from "@hono/zod-openapi";
import { TENANT_MODES, type TenantMode } from "../../../../shared/domain/rails.ts";
import { iso, isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The key's first characters, to tell keys apart.", example: "svc_test_3kT9" }),
    mode: z.enum(TENANT_MODES).openapi({ description: "What the key acts in: sandbox (`svc_test_…`) or live (`svc_live_…`)." }),
    createdAt: TimestampSchema,
    revokedAt: TimestampSchema.nullable(),
  })
  .openapi("ApiKey");

export const apiKeyView = (k: { id: string; name: string; prefix: string; mode: TenantMode; createdAt: Date; revokedAt: Date | null }) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  mode: k.mode,
  createdAt: iso(k.createdAt),
  revokedAt: isoOrNull(k.revokedAt),
});
