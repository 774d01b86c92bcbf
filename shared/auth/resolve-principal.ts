import { and, eq, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { batchColumn } from "../../db/batch-columns.ts";
import type { Db } from "../../db/create-db.ts";
import { preparedReads } from "../../db/prepared-batch.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { type Role, users } from "../../db/schema/users.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { Principal } from "./principal.ts";
import { hashApiKey } from "./api-keys.ts";
import { verifySessionToken } from "./session-tokens.ts";

/** The principal's tenant, under names of their own (distinct from the key's and the user's columns, see db/batch-columns.ts). */
const tenantColumns = {
  id: batchColumn(tenants.id, "principal_tenant_id"),
  name: batchColumn(tenants.name, "principal_tenant_name"),
  mode: batchColumn(tenants.mode, "principal_tenant_mode"),
  clockOffsetMs: batchColumn(tenants.clockOffsetMs, "principal_tenant_clock_offset_ms"),
  certifiedAt: batchColumn(tenants.certifiedAt, "principal_tenant_certified_at"),
  descriptionVersion: batchColumn(tenants.descriptionVersion, "principal_tenant_description_version"),
};

/** A credential lookup, built once per database (db/prepared-batch.ts): one statement, one round trip. */
function lookupOnce<Row>(lookup: (db: Db) => BatchItem<"sqlite">) {
  const run = preparedReads((d: Db) => [lookup(d)] as const) as unknown as (db: Db, values: Record<string, unknown>) => Promise<[Row[]]>;
  return async (db: Db, values: Record<string, unknown>): Promise<Row[]> => (await run(db, values))[0];
}

const liveKey = and(eq(apiKeys.keyHash, sql.placeholder("keyHash")), isNull(apiKeys.revokedAt));
const keyLookup = lookupOnce<{ apiKeyId: string; mode: TenantMode; tenant: Principal["tenant"] }>((db) =>
  db
    .select({ apiKeyId: apiKeys.id, mode: apiKeys.mode, tenant: tenantColumns })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(liveKey)
    .limit(1),
);

/**
 * The API key's principal, or null. A revoked key is simply not found: the
 * lookup reads `revoked_at` on every request (nothing is cached), so
 * revocation takes effect on the very next one.
 */
export async function principalForApiKey(db: Db, key: string): Promise<Principal | null> {
  if (key.length < 10 || key.length > 100) return null;
  const [row] = await keyLookup(db, { keyHash: await hashApiKey(key) });
  return row ? { kind: "apiKey", apiKeyId: row.apiKeyId, mode: row.mode, tenant: row.tenant } : null;
}

const sessionLookup = lookupOnce<{ userId: string; email: string; role: Role; tenantId: string; sessionVersion: number; tenant: Principal["tenant"] }>((db) =>
  db
    .select({ userId: users.id, email: users.email, role: users.role, tenantId: users.tenantId, sessionVersion: users.sessionVersion, tenant: tenantColumns })
    .from(users)
    .innerJoin(tenants, eq(tenants.id, users.tenantId))
    .where(eq(users.id, sql.placeholder("userId")))
    .limit(1),
);

/** The session's user with the role the database holds now, or null: also for a removed user, or a session ended by a log-out or a password change. */
export async function principalForSession(db: Db, token: string, secret: string): Promise<Principal | null> {
  const claims = await verifySessionToken(token, secret);
  if (!claims) return null;
  const [row] = await sessionLookup(db, { userId: claims.sub });
  if (!row || row.tenantId !== claims.tid || row.sessionVersion !== (claims.sv ?? 0)) return null;
  return { kind: "user", userId: row.userId, email: row.email, role: row.role, sessionVersion: row.sessionVersion, tenant: row.tenant };
}
