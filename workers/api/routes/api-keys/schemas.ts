import { z } from "@hono/zod-openapi";
import { iso, isoOrNull, TimestampSchema } from "../../../../shared/schemas/common.ts";

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The key's first characters, to tell keys apart.", example: "svc_test_3kT9" }),
    createdAt: TimestampSchema,
    revokedAt: TimestampSchema.nullable(),
  })
  .openapi("ApiKey");

export const apiKeyView = (k: { id: string; name: string; prefix: string; createdAt: Date; revokedAt: Date | null }) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  createdAt: iso(k.createdAt),
  revokedAt: isoOrNull(k.revokedAt),
});
