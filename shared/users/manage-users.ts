import { and, eq, ne, type SQL, sql } from "drizzle-orm";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { revokeKeysCreatedBy } from "../api-keys/api-key-verbs.ts";
import { users, type Role } from "../../db/schema/users.ts";
import { conflict, forbidden, notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { VerbDeps } from "../verbs.ts";

/** Who asks (an Owner or Admin of the tenant: the route's roles). */
type Actor = { tenantId: string; userId: string; role: Role };

/**
 * The tenant has an OWNER besides `userId`: the condition a removal or a
 * demotion of an OWNER is written under, evaluated by the write itself, so
 * two owners removing each other at once leave one.
 */
const anotherOwner = (tenantId: string, userId: string) =>
  sql`EXISTS (SELECT 1 FROM ${users} WHERE ${users.tenantId} = ${tenantId} AND ${users.role} = 'OWNER' AND ${users.id} <> ${userId})`;

/** The tenant's user, or 404 (another tenant's id, or none). */
async function userOf(db: VerbDeps["db"], tenantId: string, id: string) {
  if (!isUuid(id)) throw notFound("User");
  const [row] = await db
    .select({ id: users.id, role: users.role, email: users.email })
    .from(users)
    .where(and(eq(users.id, id), eq(users.tenantId, tenantId)))
    .limit(1);
  if (!row) throw notFound("User");
  return row;
}

/** Only an OWNER may act on an OWNER, or make one (as only an OWNER may add one). */
function assertMayManage(actor: Actor, target: { role: Role }, newRole?: Role) {
  if (actor.role !== "OWNER" && (target.role === "OWNER" || newRole === "OWNER")) throw forbidden("Only an OWNER may change or remove an OWNER");
}

/**
 * Removes a dashboard user of the tenant: the row goes, so the next request
 * of any of its sessions is refused (401: sessions re-read their user), its
 * e-mail is free again (its verification links stay, so the links sent to
 * the address keep counting against it), and the keys it created stay (they are the tenant's),
 * no longer naming it; with `revokeKeys`, its unrevoked keys are revoked in
 * the same batch, under the same guard (no removal, no revocation). The last
 * OWNER cannot be removed (409); only an OWNER removes an OWNER (403). A user
 * may remove itself, under the same rules.
 */
export async function removeUser({ db }: Pick<VerbDeps, "db">, input: { actor: Actor; id: string; revokeKeys?: boolean; now: Date }): Promise<void> {
  const target = await userOf(db, input.actor.tenantId, input.id);
  assertMayManage(input.actor, target);
  const guard = and(
    eq(users.id, target.id),
    eq(users.tenantId, input.actor.tenantId),
    // An ADMIN removes only a non-owner, as it is when the write runs (not a user promoted since it was read).
    input.actor.role === "OWNER" ? sql`(${users.role} <> 'OWNER' OR ${anotherOwner(input.actor.tenantId, target.id)})` : ne(users.role, "OWNER"),
  );
  const { removable, statements: removal } = userRemoval(db, { id: target.id, where: guard! });
  // The revocation runs first: it finds the keys by their creator, whom the next write forgets.
  const removed = input.revokeKeys
    ? (await db.batch([revokeKeysCreatedBy(db, { tenantId: input.actor.tenantId, userId: target.id, now: input.now, onlyIf: removable }), ...removal]))[2]
    : (await db.batch(removal))[1];
  if (removed.length === 0) {
    if (input.actor.role !== "OWNER") throw forbidden("Only an OWNER may change or remove an OWNER");
    throw conflict("The tenant's last OWNER cannot be removed: make another user OWNER first");
  }
}

/**
 * The writes that remove the user `where` selects (its id: `id`, a value or
 * SQL), for the caller's batch: the API keys it created stop naming it (they
 * are the tenant's and stay), then its row goes, so its sessions end on their
 * next request. `removable`: the condition the first write runs under (the
 * user is there to remove), for the caller's own writes in the batch.
 */
export function userRemoval(db: VerbDeps["db"], who: { id: string | SQL; where: SQL }) {
  const removable = sql`EXISTS (SELECT 1 FROM ${users} WHERE ${who.where})`;
  const statements = [
    db
      .update(apiKeys)
      .set({ createdByUserId: null })
      .where(and(eq(apiKeys.createdByUserId, who.id), removable)),
    db.delete(users).where(who.where).returning({ id: users.id }),
  ] as const;
  return { removable, statements };
}

/**
 * Changes a user's role. Only an OWNER gives or takes OWNER (403); the last
 * OWNER keeps it (409). The change takes effect on the user's next request.
 */
export async function changeRole({ db }: Pick<VerbDeps, "db">, input: { actor: Actor; id: string; role: Role }) {
  const target = await userOf(db, input.actor.tenantId, input.id);
  assertMayManage(input.actor, target, input.role);
  if (target.role === input.role) return { id: target.id, email: target.email, role: target.role };
  const [changed] = await db
    .update(users)
    .set({ role: input.role })
    .where(
      and(
        eq(users.id, target.id),
        eq(users.tenantId, input.actor.tenantId),
        // Demoting an OWNER only while another remains.
        target.role === "OWNER" ? anotherOwner(input.actor.tenantId, target.id) : ne(users.role, "OWNER"),
      ),
    )
    .returning({ id: users.id, email: users.email, role: users.role });
  if (!changed) throw conflict("The tenant's last OWNER keeps the role: make another user OWNER first");
  return changed;
}
