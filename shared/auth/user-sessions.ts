import { and, eq, sql } from "drizzle-orm";
import { users } from "../../db/schema/users.ts";
import { unauthorized, validationError } from "../domain/errors.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Ends every session of the user (each device's, this one's too): its
 * session version moves on, and a session token is valid only with the
 * version it was issued with (session-tokens.ts), so each is refused (401)
 * on its next request.
 */
export async function endSessions({ db }: Pick<VerbDeps, "db">, input: { userId: string; tenantId: string }): Promise<void> {
  await db
    .update(users)
    .set({ sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(and(eq(users.id, input.userId), eq(users.tenantId, input.tenantId)));
}

/**
 * Changes the user's password, given the current one (400 naming
 * `currentPassword` otherwise), and ends every earlier session of the user,
 * on every device. Returns the user as it is now, for the new session the
 * caller is given. Conditional on the hash it checked, so of two changes at
 * once only one takes effect, and on the session version the request was
 * authenticated with (`sessionVersion`), so a log-out that lands meanwhile
 * is not undone by the new session this would hand out (401; the password
 * stays).
 */
export async function changePassword(
  { db }: Pick<VerbDeps, "db">,
  input: { userId: string; tenantId: string; sessionVersion: number; currentPassword: string; newPassword: string },
) {
  const [user] = await db
    .select()
    .from(users)
    .where(and(eq(users.id, input.userId), eq(users.tenantId, input.tenantId)))
    .limit(1);
  const ok = user && (await verifyPassword(input.currentPassword, { hash: user.passwordHash, salt: user.passwordSalt, iterations: user.passwordIterations }));
  if (!user || !ok) throw validationError(["currentPassword: is not your current password"]);
  if (input.newPassword === input.currentPassword) throw validationError(["newPassword: must differ from the current password"]);
  const next = await hashPassword(input.newPassword);
  const [changed] = await db
    .update(users)
    .set({ passwordHash: next.hash, passwordSalt: next.salt, passwordIterations: next.iterations, sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash), eq(users.sessionVersion, input.sessionVersion)))
    .returning();
  if (changed) return changed;
  const [now] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, user.id)).limit(1);
  if (now && now.passwordHash !== user.passwordHash) throw validationError(["currentPassword: the password was changed meanwhile; log in again"]);
  throw unauthorized("This session ended while the password was being changed (a log-out); log in again");
}
