import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { insertIf } from "../../db/guarded-writes.ts";
import type { Db } from "../../db/create-db.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { users } from "../../db/schema/users.ts";
import { generateApiKey, hashApiKey } from "../auth/api-keys.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { conflict, forbidden, notFound, unauthorized } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { VerbDeps } from "../verbs.ts";

/** Unrevoked keys a tenant may hold: every per-key limit is multiplied by this at most. */
export const MAX_ACTIVE_API_KEYS = 20;

/**
 * Creates a key of a mode (DECISIONS.md "Modes"); the returned `key` is the
 * only time the secret exists outside the caller. A live key needs a
 * certified tenant (403), checked by the insert itself too, so no key is
 * created live for a tenant whose certification is not written. The insert
 * also checks the tenant's count of unrevoked keys, so concurrent creations
 * cannot pass the cap together (409).
 */
export async function createApiKey(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode: TenantMode; name: string; createdByUserId: string | null; now: Date },
) {
  const { key, prefix } = generateApiKey(input.mode);
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    name: input.name,
    prefix,
    mode: input.mode,
    keyHash: await hashApiKey(key),
    createdByUserId: input.createdByUserId,
    createdAt: input.now,
    revokedAt: null,
  };
  const underCap = sql`(SELECT count(*) FROM ${apiKeys} WHERE ${apiKeys.tenantId} = ${input.tenantId} AND ${apiKeys.revokedAt} IS NULL) < ${MAX_ACTIVE_API_KEYS}`;
  const certified = sql`EXISTS (SELECT 1 FROM ${tenants} WHERE ${tenants.id} = ${input.tenantId} AND ${tenants.certifiedAt} IS NOT NULL)`;
  // The creating user still exists as the row is written (removed since its request was authenticated: 401, not a failed reference).
  const creatorExists = input.createdByUserId
    ? sql`EXISTS (SELECT 1 FROM ${users} WHERE ${users.id} = ${input.createdByUserId} AND ${users.tenantId} = ${input.tenantId})`
    : sql`1`;
  const inserted = await insertIf(db, apiKeys, row, and(underCap, creatorExists, input.mode === "live" ? certified : undefined)!).returning({ id: apiKeys.id });
  if (inserted.length === 0) {
    if (input.createdByUserId && !(await userOfTenant(db, input.tenantId, input.createdByUserId))) throw unauthorized("Invalid or expired session token");
    if (input.mode === "live" && !(await isCertified(db, input.tenantId))) throw notCertified();
    throw conflict(
      `This tenant already has ${MAX_ACTIVE_API_KEYS} active API keys, the most it may hold; revoke one (DELETE /v1/api-keys/:id) before creating another`,
    );
  }
  return { ...row, key };
}

const notCertified = () =>
  forbidden('Live API keys are issued after go-live certification (GET /v1/go-live), and this tenant is not certified; create a sandbox key (mode: "sandbox")');

async function userOfTenant(db: Db, tenantId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.tenantId, tenantId)))
    .limit(1);
  return !!row;
}

async function isCertified(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db.select({ certifiedAt: tenants.certifiedAt }).from(tenants).where(eq(tenants.id, tenantId)).limit(1);
  return !!row?.certifiedAt;
}

/**
 * A key as lists show it, without secret or hash, with who created it: the
 * creating user's id and e-mail, read in the same query through a LEFT JOIN
 * on the key's own tenant (a removed user's keys no longer name it, so they
 * read null, as do keys no dashboard user created).
 */
const keyColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  mode: apiKeys.mode,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
  createdByUserId: users.id,
  createdByEmail: users.email,
};
const creatorOfKey = and(eq(users.id, apiKeys.createdByUserId), eq(users.tenantId, apiKeys.tenantId));

export type ListedApiKey = Omit<typeof apiKeys.$inferSelect, "tenantId" | "keyHash" | "createdByUserId"> & {
  createdBy: { userId: string; email: string } | null;
};

const listedKey = ({
  createdByUserId,
  createdByEmail,
  ...k
}: { createdByUserId: string | null; createdByEmail: string | null } & Omit<ListedApiKey, "createdBy">): ListedApiKey => ({
  ...k,
  createdBy: createdByUserId !== null && createdByEmail !== null ? { userId: createdByUserId, email: createdByEmail } : null,
});

/**
 * The tenant's keys, newest first, without secrets or hashes, each with who created it.
 *
 * @example await listApiKeys({ db }, { tenantId, limit: 20 }) // { data: [{ id, name, prefix, mode, createdAt, revokedAt: null, createdBy: { userId, email } }], nextCursor: null }
 */
export async function listApiKeys({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; limit: number; cursor?: string }) {
  const page = newestFirst(apiKeys, input.cursor);
  const rows = await db
    .select(keyColumns)
    .from(apiKeys)
    .leftJoin(users, creatorOfKey)
    .where(and(eq(apiKeys.tenantId, input.tenantId), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows.map(listedKey), input.limit);
}

/**
 * Revokes a key of the tenant. Authentication reads `revoked_at` on every
 * request, so the very next request with the key is refused. Revoking an
 * already revoked key is a no-op that answers the same.
 */
export async function revokeApiKey({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string; now: Date }) {
  await db
    .update(apiKeys)
    .set({ revokedAt: input.now })
    .where(and(eq(apiKeys.id, input.id), eq(apiKeys.tenantId, input.tenantId), isNull(apiKeys.revokedAt)));
  const [row] = await db
    .select(keyColumns)
    .from(apiKeys)
    .leftJoin(users, creatorOfKey)
    .where(and(eq(apiKeys.id, input.id), eq(apiKeys.tenantId, input.tenantId)))
    .limit(1);
  if (!row) throw notFound("API key");
  return listedKey(row);
}

/**
 * The write that revokes the live keys `userId` created in the tenant, as
 * `revokeApiKey` does (`revoked_at` set, so the very next request with one
 * is refused), for the caller's batch and under its condition `onlyIf`
 * (removing a user with `revokeKeys`: only if the removal happens).
 */
export function revokeKeysCreatedBy(db: Db, input: { tenantId: string; userId: string; now: Date; onlyIf: SQL }) {
  return db
    .update(apiKeys)
    .set({ revokedAt: input.now })
    .where(and(eq(apiKeys.tenantId, input.tenantId), eq(apiKeys.createdByUserId, input.userId), isNull(apiKeys.revokedAt), input.onlyIf));
}
