import { eq } from "drizzle-orm";
import { users } from "../../db/schema/users.ts";
import { unauthorized } from "../domain/errors.ts";
import { DUMMY_HASH, verifyPassword } from "./passwords.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Checks dashboard credentials. An unknown e-mail costs the same PBKDF2 work
 * as a wrong password and gets the same answer, so neither timing nor message
 * tells which e-mails have accounts.
 */
export async function logIn({ db }: Pick<VerbDeps, "db">, input: { email: string; password: string }) {
  const [user] = await db.select().from(users).where(eq(users.email, input.email.trim().toLowerCase())).limit(1);
  const ok = await verifyPassword(
    input.password,
    user ? { hash: user.passwordHash, salt: user.passwordSalt, iterations: user.passwordIterations } : DUMMY_HASH,
  );
  if (!user || !ok) throw unauthorized("Invalid e-mail or password");
  return user;
}
