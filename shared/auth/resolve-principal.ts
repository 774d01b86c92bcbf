import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { users } from "../../db/schema/users.ts";
import type { Principal } from "./principal.ts";
import { hashApiKey } from "./api-keys.ts";
import { verifySessionToken } from "./session-tokens.ts";

const tenantColumns = {
  id: tenants.id,
  name: tenants.name,
  mode: tenants.mode,
  clockOffsetMs: tenants.clockOffsetMs,
  certifiedAt: tenants.certifiedAt,
};

/**
 * The API key's tenant, or null. A revoked key is simply not found: the
 * lookup reads `revoked_at` on every request, so revocation takes effect on
 * the very next one.
 */
export async function principalForApiKey(db: Db, key: string): Promise<Principal | null> {
  if (key.length < 10 || key.length > 100) return null;
  const [row] = await db
    .select({ apiKeyId: apiKeys.id, mode: apiKeys.mode, tenant: tenantColumns })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(and(eq(apiKeys.keyHash, await hashApiKey(key)), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row ? { kind: "apiKey", apiKeyId: row.apiKeyId, mode: row.mode, tenant: row.tenant } : null;
}

/** The session's user with the role the database holds now, or null. */
export async function principalForSession(db: Db, token: string, secret: string): Promise<Principal | null> {
  const claims = await verifySessionToken(token, secret);
  if (!claims) return null;
  const [row] = await db
    .select({ userId: users.id, email: users.email, role: users.role, tenantId: users.tenantId, tenant: tenantColumns })
    .from(users)
    .innerJoin(tenants, eq(tenants.id, users.tenantId))
    .where(eq(users.id, claims.sub))
    .limit(1);
  if (!row || row.tenantId !== claims.tid) return null;
  return { kind: "user", userId: row.userId, email: row.email, role: row.role, tenant: row.tenant };
}
