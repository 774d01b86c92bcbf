import { sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { users, type Role } from "../../db/schema/users.ts";
import { ADDRESS_HELD_MESSAGE, heldAddress } from "../auth/email-release.ts";
import { hashPassword } from "../auth/passwords.ts";
import { conflict, forbidden } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { VerbDeps } from "../verbs.ts";

/** The most dashboard users a tenant holds: each holds an e-mail address no one else can sign up with until it is freed. */
export const MAX_USERS_PER_TENANT = 50;

/** Signup's and an added user's 409: the address has an account (in any tenant). */
export const EMAIL_TAKEN_MESSAGE =
  "An account with this e-mail already exists. If it is not yours, POST /v1/auth/release-email sends the address a link to free it (when that account never verified it)";

/**
 * Adds a dashboard user to the caller's tenant; only an OWNER may add an
 * OWNER. At most `MAX_USERS_PER_TENANT` users (409), and never an address
 * held after a release (409: only its owner signs up with it).
 */
export async function addUser(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; actorRole: Role; email: string; password: string; role: Role; now: Date },
) {
  if (input.role === "OWNER" && input.actorRole !== "OWNER") throw forbidden("Only an OWNER may add an OWNER");
  const password = await hashPassword(input.password);
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    email: input.email.trim().toLowerCase(),
    role: input.role,
    passwordHash: password.hash,
    passwordSalt: password.salt,
    passwordIterations: password.iterations,
    createdAt: input.now,
  };
  try {
    const underCap = sql`(SELECT count(*) FROM ${users} WHERE ${users.tenantId} = ${input.tenantId}) < ${MAX_USERS_PER_TENANT}`;
    const held = await heldAddress(row.email, input.now);
    const [inserted, [stillHeld]] = await db.batch([
      insertIf(db, users, row, sql`${underCap} AND NOT ${held}`).returning({ id: users.id }),
      db.select({ held: sql<number>`${held}` }).from(sql`(SELECT 1)`),
    ]);
    if (inserted.length === 0) {
      if (stillHeld?.held) throw conflict(ADDRESS_HELD_MESSAGE);
      throw conflict(`This tenant already has ${MAX_USERS_PER_TENANT} users, the most it may hold; remove one (DELETE /v1/users/:id) first`);
    }
  } catch (err) {
    if (isUniqueViolation(err, "users.email")) throw conflict(EMAIL_TAKEN_MESSAGE);
    throw err;
  }
  return { id: row.id, email: row.email, role: row.role };
}
