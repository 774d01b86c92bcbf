import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { generateApiKey, hashApiKey } from "../auth/api-keys.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { notFound } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";

/** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
export async function createApiKey(
  db: Db,
  input: { tenantId: string; mode: TenantMode; name: string; createdByUserId: string | null; now: Date },
) {
  const { key, prefix } = generateApiKey(input.mode);
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    name: input.name,
    prefix,
    keyHash: await hashApiKey(key),
    createdByUserId: input.createdByUserId,
    createdAt: input.now,
    revokedAt: null,
  };
  await db.insert(apiKeys).values(row);
  return { ...row, key };
}

/** The tenant's keys, newest first, without secrets or hashes. */
export async function listApiKeys(db: Db, input: { tenantId: string; limit: number; cursor?: string }) {
  const page = newestFirst(apiKeys, input.cursor);
  const rows = await db
    .select({ id: apiKeys.id, name: apiKeys.name, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, input.tenantId), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}

/**
 * Revokes a key of the tenant. Authentication reads `revoked_at` on every
 * request, so the very next request with the key is refused. Revoking an
 * already revoked key is a no-op that answers the same.
 */
export async function revokeApiKey(db: Db, input: { tenantId: string; id: string; now: Date }) {
  await db
    .update(apiKeys)
    .set({ revokedAt: input.now })
    .where(and(eq(apiKeys.id, input.id), eq(apiKeys.tenantId, input.tenantId), isNull(apiKeys.revokedAt)));
  const [row] = await db
    .select({ id: apiKeys.id, name: apiKeys.name, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, input.id), eq(apiKeys.tenantId, input.tenantId)))
    .limit(1);
  if (!row) throw notFound("API key");
  return row;
}
