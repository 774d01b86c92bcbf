import { and, eq, isNull, type Placeholder, type SQL, sql } from "drizzle-orm";
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

/** The principal's tenant, under names of their own (the lookup runs in a batch, see db/batch-columns.ts). */
const tenantColumns = {
  id: batchColumn(tenants.id, "principal_tenant_id"),
  name: batchColumn(tenants.name, "principal_tenant_name"),
  mode: batchColumn(tenants.mode, "principal_tenant_mode"),
  clockOffsetMs: batchColumn(tenants.clockOffsetMs, "principal_tenant_clock_offset_ms"),
  certifiedAt: batchColumn(tenants.certifiedAt, "principal_tenant_certified_at"),
};

/**
 * Who a route's caller-scoped reads are about, as SQL evaluated inside the
 * lookup's own batch: `tenantId` is the tenant of the credential (a key
 * that is not revoked, a user still in the token's tenant), NULL when it
 * resolves to nobody, so the reads then find nothing. The values are
 * placeholders, filled per request: the batch is built once (see
 * db/prepared-batch.ts).
 */
export type Caller = { kind: "apiKey"; tenantId: SQL } | { kind: "user"; tenantId: SQL; userId: Placeholder };

/**
 * Reads of a route that depend only on who is calling (`GET /v1/me`'s
 * configurations): they run in the same `db.batch()` as the credential
 * lookup, one D1 round trip for both, on the same snapshot. Each must be
 * scoped by `caller.tenantId` (or `caller.userId`), and take no other value:
 * its SQL is built once per database and reused for every request.
 */
export type CallerReads = (db: Db, caller: Caller) => readonly BatchItem<"sqlite">[];

/** The principal, and the results of the route's caller reads in their order (empty without any). */
export type Resolved = { principal: Principal; reads: unknown[] };

/** The lookup, then the route's caller reads, built once per route and database: one round trip. */
function lookupOnce<Row>(lookup: (db: Db) => BatchItem<"sqlite">, caller: Caller) {
  const byRoute = new Map<CallerReads | undefined, (db: Db, values: Record<string, unknown>) => Promise<unknown[]>>();
  return async (db: Db, reads: CallerReads | undefined, values: Record<string, unknown>) => {
    let run = byRoute.get(reads);
    if (!run) {
      run = preparedReads((d: Db) => [lookup(d), ...(reads?.(d, caller) ?? [])] as const) as unknown as (
        db: Db,
        values: Record<string, unknown>,
      ) => Promise<unknown[]>;
      byRoute.set(reads, run);
    }
    const [rows, ...results] = await run(db, values);
    return { rows: rows as Row[], reads: results };
  };
}

const liveKey = and(eq(apiKeys.keyHash, sql.placeholder("keyHash")), isNull(apiKeys.revokedAt));
const keyLookup = lookupOnce<{ apiKeyId: string; mode: TenantMode; tenant: Principal["tenant"] }>(
  (db) =>
    db
      .select({ apiKeyId: apiKeys.id, mode: apiKeys.mode, tenant: tenantColumns })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .where(liveKey)
      .limit(1),
  { kind: "apiKey", tenantId: sql`(SELECT ${apiKeys.tenantId} FROM ${apiKeys} WHERE ${liveKey})` },
);

/**
 * The API key's tenant, or null. A revoked key is simply not found: the
 * lookup reads `revoked_at` on every request (nothing is cached), so
 * revocation takes effect on the very next one. The route's caller reads
 * (scoped by the same key condition) run in the same batch.
 */
export async function principalForApiKey(db: Db, key: string, reads?: CallerReads): Promise<Resolved | null> {
  if (key.length < 10 || key.length > 100) return null;
  const { rows, reads: results } = await keyLookup(db, reads, { keyHash: await hashApiKey(key) });
  const row = rows[0];
  return row ? { principal: { kind: "apiKey", apiKeyId: row.apiKeyId, mode: row.mode, tenant: row.tenant }, reads: results } : null;
}

const sessionUser = sql.placeholder("userId");
const sessionLookup = lookupOnce<{ userId: string; email: string; role: Role; tenantId: string; tenant: Principal["tenant"] }>(
  (db) =>
    db
      .select({ userId: users.id, email: users.email, role: users.role, tenantId: users.tenantId, tenant: tenantColumns })
      .from(users)
      .innerJoin(tenants, eq(tenants.id, users.tenantId))
      .where(eq(users.id, sessionUser))
      .limit(1),
  {
    kind: "user",
    tenantId: sql`(SELECT ${users.tenantId} FROM ${users} WHERE ${users.id} = ${sessionUser} AND ${users.tenantId} = ${sql.placeholder("tokenTenantId")})`,
    userId: sessionUser,
  },
);

/** The session's user with the role the database holds now, or null; the route's caller reads in the same batch. */
export async function principalForSession(db: Db, token: string, secret: string, reads?: CallerReads): Promise<Resolved | null> {
  const claims = await verifySessionToken(token, secret);
  if (!claims) return null;
  const { rows, reads: results } = await sessionLookup(db, reads, { userId: claims.sub, tokenTenantId: claims.tid });
  const row = rows[0];
  if (!row || row.tenantId !== claims.tid) return null;
  return { principal: { kind: "user", userId: row.userId, email: row.email, role: row.role, tenant: row.tenant }, reads: results };
}
