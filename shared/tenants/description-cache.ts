import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { placeholderAs, preparedReads } from "../../db/prepared-batch.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { type Role, users } from "../../db/schema/users.ts";
import type { Principal } from "../auth/principal.ts";
import { describeTenant, tenantDescriptionReads } from "./describe-tenant.ts";

/** What the description holds of a user: enough to say whose e-mail is verified. */
export type DescribedUser = { id: string; role: Role; emailVerifiedAt: Date | null; createdAt: Date };

/** What GET /v1/me shows of a tenant besides its row: configurations, programs, and its users' verification. */
export type TenantDescription = ReturnType<typeof describeTenant> & { users: DescribedUser[] };

/** Tenants whose description an isolate keeps; past it, the one kept longest goes. */
export const MAX_DESCRIBED_TENANTS = 1_000;

/** The description and the version it was read at, in one snapshot (one batch). */
const descriptionReads = preparedReads((db: Db) => {
  const tenantId = placeholderAs<string>("tenantId");
  return [
    db.select({ version: tenants.descriptionVersion }).from(tenants).where(eq(tenants.id, tenantId)).limit(1),
    ...tenantDescriptionReads(db, tenantId),
    db
      .select({ id: users.id, role: users.role, emailVerifiedAt: users.emailVerifiedAt, createdAt: users.createdAt })
      .from(users)
      .where(eq(users.tenantId, tenantId))
      .orderBy(asc(users.createdAt), asc(users.id)),
  ] as const;
});

const caches = new WeakMap<Db, Map<string, { version: number; description: TenantDescription }>>();

/**
 * The tenant's description, from this isolate's copy when it was read at
 * `version` (the version the request's credential lookup just read from
 * the primary, in the same round trip as authentication), else read again
 * (one more round trip) and kept.
 *
 * Triggers bump `tenants.description_version` in the same statement as any
 * change to what the description holds (migration 0023): so a copy at the
 * version the lookup read is exactly what the database holds at that
 * moment, and a change shows on the very next request, in every isolate.
 * Without a version (a principal not from a lookup), it always reads.
 */
export async function describedTenant(db: Db, tenantId: string, version: number | undefined): Promise<TenantDescription> {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  const known = cache.get(tenantId);
  if (known && version !== undefined && known.version === version) return known.description;
  const [[row], configs, programs, userRows] = await descriptionReads(db, { tenantId });
  const description: TenantDescription = { ...describeTenant([configs, programs]), users: userRows };
  cache.delete(tenantId);
  if (row) {
    if (cache.size >= MAX_DESCRIBED_TENANTS) cache.delete(cache.keys().next().value!);
    cache.set(tenantId, { version: row.version, description });
  }
  return description;
}

/**
 * Whether the caller's e-mail address is verified: a dashboard user's own;
 * for an API key, the tenant owner's (the first OWNER), the address
 * notification e-mail goes to.
 */
export function callerEmailVerified(description: TenantDescription, principal: Principal): boolean {
  const user = principal.kind === "user" ? description.users.find((u) => u.id === principal.userId) : description.users.find((u) => u.role === "OWNER");
  return Boolean(user?.emailVerifiedAt);
}
