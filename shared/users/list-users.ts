import { and, eq } from "drizzle-orm";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { users } from "../../db/schema/users.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * The tenant's dashboard users, newest first (the Team page): e-mail, role
 * and when they were added; never a password hash. Another tenant's users
 * are never read (the tenant is in the WHERE).
 *
 * @example await listUsers({ db }, { tenantId, limit: 20 }) // { data: [{ id, email, role: "OWNER", createdAt }], nextCursor: null }
 */
export async function listUsers({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; limit: number; cursor?: string }) {
  const page = newestFirst(users, input.cursor);
  const rows = await db
    .select({ id: users.id, email: users.email, role: users.role, createdAt: users.createdAt })
    .from(users)
    .where(and(eq(users.tenantId, input.tenantId), page.where))
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}
