import { isUniqueViolation } from "../../db/errors.ts";
import { users, type Role } from "../../db/schema/users.ts";
import { hashPassword } from "../auth/passwords.ts";
import { conflict, forbidden } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import type { VerbDeps } from "../verbs.ts";

/** Adds a dashboard user to the caller's tenant; only an OWNER may add an OWNER. */
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
    await db.insert(users).values(row);
  } catch (err) {
    if (isUniqueViolation(err, "users.email")) throw conflict("An account with this e-mail already exists");
    throw err;
  }
  return { id: row.id, email: row.email, role: row.role };
}
