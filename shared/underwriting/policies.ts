import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { decodeCursor, encodeCursor } from "../../db/pagination.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { policies } from "../../db/schema/policies.ts";
import { conflict } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { DEFAULT_POLICY, type UnderwritingPolicy } from "../domain/underwriting.ts";
import type { VerbDeps } from "../verbs.ts";

type PolicyRow = typeof policies.$inferSelect;

const toPolicy = (row: PolicyRow): UnderwritingPolicy => ({
  version: row.version,
  requireKycVerified: row.requireKycVerified,
  manualReviewAbove: row.manualReviewAbove,
  maxOpenLoansPerBorrower: row.maxOpenLoansPerBorrower,
  blockedWallets: row.blockedWallets,
});

/**
 * The tenant's current policy: its highest version. Signup stores version 1
 * (the default policy); a tenant without any row is on that same default.
 */
export async function currentPolicy(db: Db, tenantId: string): Promise<UnderwritingPolicy & { createdAt: Date | null }> {
  return policyOf(await currentPolicyQuery(db, tenantId));
}

/** The select of `currentPolicy`, for a batch; `policyOf` reads its rows. */
export const currentPolicyQuery = (db: Db, tenantId: string) =>
  db.select().from(policies).where(eq(policies.tenantId, tenantId)).orderBy(desc(policies.version)).limit(1);

/** The policy in the rows of `currentPolicyQuery`: its row, or the default. */
export const policyOf = ([row]: PolicyRow[]): UnderwritingPolicy & { createdAt: Date | null } =>
  row ? { ...toPolicy(row), createdAt: row.createdAt } : { ...DEFAULT_POLICY, createdAt: null };

/**
 * Every stored version of the tenant's policy, newest first (keyset pages):
 * what each version said, who saved it and when, so a merchant can read the
 * rules behind any loan's `decision.policyVersion`.
 */
export async function listPolicyVersions(db: Db, input: { tenantId: string; limit: number; cursor?: string }) {
  // Keyset on the version itself (versions of one tenant are unique and only grow): the cursor carries the last version shown.
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  const rows = await db
    .select()
    .from(policies)
    .where(and(eq(policies.tenantId, input.tenantId), after ? lt(policies.version, after.createdAt) : undefined))
    .orderBy(desc(policies.version))
    .limit(input.limit + 1);
  const data = rows.slice(0, input.limit);
  const last = data[data.length - 1];
  const nextCursor = rows.length > input.limit && last ? encodeCursor({ createdAt: last.version, id: last.id }) : null;
  return { data: data.map((row) => ({ ...toPolicy(row), createdAt: row.createdAt, createdBy: row.createdBy })), nextCursor };
}

/** The insert of a tenant's first policy (version 1, the default), for signup's batch. */
export const defaultPolicyInsert = (db: Db, tenantId: string, now: Date) =>
  db.insert(policies).values({
    id: newId(),
    tenantId,
    version: DEFAULT_POLICY.version,
    requireKycVerified: DEFAULT_POLICY.requireKycVerified,
    manualReviewAbove: DEFAULT_POLICY.manualReviewAbove,
    maxOpenLoansPerBorrower: DEFAULT_POLICY.maxOpenLoansPerBorrower,
    blockedWallets: DEFAULT_POLICY.blockedWallets,
    createdBy: "system:signup",
    createdAt: now,
  });

/**
 * Stores a new version (current + 1) in one statement; two concurrent PUTs
 * cannot both take the same version (unique index), the loser gets 409.
 */
export async function putPolicy(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; policy: Omit<UnderwritingPolicy, "version">; actor: string; now: Date },
): Promise<UnderwritingPolicy & { createdAt: Date }> {
  const id = newId();
  const floor = DEFAULT_POLICY.version; // a tenant with no row is on version 1
  try {
    await db.insert(policies).values({
      id,
      tenantId: input.tenantId,
      version:
        sql`(SELECT COALESCE(MAX(${policies.version}), ${floor}) + 1 FROM ${policies} WHERE ${policies.tenantId} = ${input.tenantId})` as unknown as number,
      requireKycVerified: input.policy.requireKycVerified,
      manualReviewAbove: input.policy.manualReviewAbove,
      maxOpenLoansPerBorrower: input.policy.maxOpenLoansPerBorrower,
      blockedWallets: input.policy.blockedWallets,
      createdBy: input.actor,
      createdAt: input.now,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("The policy changed at the same time; read it again and retry");
    throw err;
  }
  const [row] = await db
    .select()
    .from(policies)
    .where(and(eq(policies.id, id), eq(policies.tenantId, input.tenantId)));
  return { ...toPolicy(row!), createdAt: row!.createdAt };
}
