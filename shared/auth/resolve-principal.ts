import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { batchColumn } from "../../db/batch-columns.ts";
import type { Db } from "../../db/create-db.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { users } from "../../db/schema/users.ts";
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
 * resolves to nobody, so the reads then find nothing.
 */
export type Caller = { kind: "apiKey"; tenantId: SQL } | { kind: "user"; tenantId: SQL; userId: string };

/**
 * Reads of a route that depend only on who is calling (`GET /v1/me`'s
 * configurations): they run in the same `db.batch()` as the credential
 * lookup, one D1 round trip for both, on the same snapshot. Each must be
 * scoped by `caller.tenantId` (or `caller.userId`).
 */
export type CallerReads = (db: Db, caller: Caller) => readonly BatchItem<"sqlite">[];

/** The principal, and the results of the route's caller reads in their order (empty without any). */
export type Resolved = { principal: Principal; reads: unknown[] };

/** The lookup, alone or batched with the caller's reads: one round trip either way. */
async function lookupWith<Row>(db: Db, lookup: BatchItem<"sqlite"> & PromiseLike<Row[]>, extra: readonly BatchItem<"sqlite">[]) {
  if (extra.length === 0) return { rows: await lookup, reads: [] as unknown[] };
  const [rows, ...reads] = (await db.batch([lookup, ...extra])) as unknown as [Row[], ...unknown[]];
  return { rows, reads };
}

/**
 * The API key's tenant, or null. A revoked key is simply not found: the
 * lookup reads `revoked_at` on every request (nothing is cached), so
 * revocation takes effect on the very next one. The route's caller reads
 * (scoped by the same key condition) run in the same batch.
 */
export async function principalForApiKey(db: Db, key: string, reads?: CallerReads): Promise<Resolved | null> {
  if (key.length < 10 || key.length > 100) return null;
  const keyHash = await hashApiKey(key);
  const live = and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt));
  const lookup = db
    .select({ apiKeyId: apiKeys.id, mode: apiKeys.mode, tenant: tenantColumns })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(live)
    .limit(1);
  const tenantId = sql`(SELECT ${apiKeys.tenantId} FROM ${apiKeys} WHERE ${live})`;
  const { rows, reads: results } = await lookupWith(db, lookup, reads?.(db, { kind: "apiKey", tenantId }) ?? []);
  const row = rows[0];
  return row ? { principal: { kind: "apiKey", apiKeyId: row.apiKeyId, mode: row.mode, tenant: row.tenant }, reads: results } : null;
}

/** The session's user with the role the database holds now, or null; the route's caller reads in the same batch. */
export async function principalForSession(db: Db, token: string, secret: string, reads?: CallerReads): Promise<Resolved | null> {
  const claims = await verifySessionToken(token, secret);
  if (!claims) return null;
  const lookup = db
    .select({ userId: users.id, email: users.email, role: users.role, tenantId: users.tenantId, tenant: tenantColumns })
    .from(users)
    .innerJoin(tenants, eq(tenants.id, users.tenantId))
    .where(eq(users.id, claims.sub))
    .limit(1);
  const tenantId = sql`(SELECT ${users.tenantId} FROM ${users} WHERE ${users.id} = ${claims.sub} AND ${users.tenantId} = ${claims.tid})`;
  const { rows, reads: results } = await lookupWith(db, lookup, reads?.(db, { kind: "user", tenantId, userId: claims.sub }) ?? []);
  const row = rows[0];
  if (!row || row.tenantId !== claims.tid) return null;
  return { principal: { kind: "user", userId: row.userId, email: row.email, role: row.role, tenant: row.tenant }, reads: results };
}
