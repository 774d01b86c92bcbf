import { and, asc, eq, isNotNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { borrowerKycAudit, borrowers } from "../../db/schema/borrowers.ts";
import { creditLines } from "../../db/schema/credit-lines.ts";
import { conflict, notFound } from "../domain/errors.ts";
import { isUuid, newId } from "../domain/ids.ts";
import type { KycStatus } from "../domain/underwriting.ts";
import type { VerbDeps } from "../verbs.ts";

export type BorrowerRow = typeof borrowers.$inferSelect;
export type KycAuditRow = typeof borrowerKycAudit.$inferSelect;
export type BorrowerWithAudit = { borrower: BorrowerRow; audit: KycAuditRow[] };

/**
 * The tenant's borrower whose id, else whose `borrowerRef`, is `idOrRef`
 * (DECISIONS.md "Borrowers and KYC"). Every read is scoped to the tenant, so
 * another tenant's borrower id is just an unknown ref here: it never
 * resolves to, or reveals, that borrower.
 */
export async function findBorrower(db: Db, tenantId: string, idOrRef: string): Promise<BorrowerRow | null> {
  if (isUuid(idOrRef)) {
    const [byId] = await db
      .select()
      .from(borrowers)
      .where(and(eq(borrowers.tenantId, tenantId), eq(borrowers.id, idOrRef)))
      .limit(1);
    if (byId) return byId;
  }
  const [byRef] = await db
    .select()
    .from(borrowers)
    .where(and(eq(borrowers.tenantId, tenantId), eq(borrowers.borrowerRef, idOrRef)))
    .limit(1);
  return byRef ?? null;
}

const auditOf = (db: Db, tenantId: string, borrowerId: string) =>
  db
    .select()
    .from(borrowerKycAudit)
    .where(and(eq(borrowerKycAudit.tenantId, tenantId), eq(borrowerKycAudit.borrowerId, borrowerId)))
    .orderBy(asc(borrowerKycAudit.createdAt), asc(sql`rowid`));

/** A borrower with its KYC audit trail, oldest change first; unknown (or another tenant's): 404. */
export async function getBorrower({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; idOrRef: string }): Promise<BorrowerWithAudit> {
  const borrower = await findBorrower(db, input.tenantId, input.idOrRef);
  if (!borrower) throw notFound("Borrower");
  return { borrower, audit: await auditOf(db, input.tenantId, borrower.id) };
}

/** The row exactly as it was read: the condition every write of one KYC change is made on. */
function unchangedSince(row: BorrowerRow): SQL {
  return and(eq(borrowers.id, row.id), eq(borrowers.tenantId, row.tenantId), eq(borrowers.kycStatus, row.kycStatus), eq(borrowers.updatedAt, row.updatedAt))!;
}

/** Concurrent changes of one borrower are rare; a handful of rounds settles any realistic race. */
const MAX_ATTEMPTS = 10;

export type SetKycInput = {
  tenantId: string;
  idOrRef: string;
  status: KycStatus;
  merchantUserId: string;
  /** `apiKey:<id>` or `user:<id>`. */
  actor: string;
  /** The tenant's clock. */
  now: Date;
};

/**
 * Records a KYC status for a borrower (SPEC.md "Borrower"): stamps
 * `verifiedAt` with the tenant's clock on every call, whether or not the
 * status changes, and writes one immutable audit row (from, to, who) in the
 * same batch as the change. An unknown ref creates the borrower, as a loan
 * would, already with this status; its first audit row reads from PENDING.
 *
 * A status other than VERIFIED also withdraws the merchant's KYC confirmation
 * of every credit line booked under the borrower (DECISIONS.md
 * `POST /v1/credit-lines/:id/kyc-confirmation`), in the same batch: the
 * widget asks for KYC again (`requiresKyc`) and refuses draws until the
 * merchant confirms again. Before, a borrower the merchant failed kept
 * drawing through the widget, each draw funded.
 *
 * Every write is conditional on the row as it was read, and `updatedAt`
 * strictly increases with every change, so of two concurrent calls one
 * commits and the other re-reads and applies on top of it: every call gets
 * its own audit row with the true previous status, never a lost update.
 */
export async function setBorrowerKyc({ db }: Pick<VerbDeps, "db">, input: SetKycInput): Promise<BorrowerWithAudit> {
  const audit = (borrowerId: string, fromStatus: KycStatus, guard: SQL) =>
    insertIf(
      db,
      borrowerKycAudit,
      {
        id: newId(),
        tenantId: input.tenantId,
        borrowerId,
        fromStatus,
        toStatus: input.status,
        merchantUserId: input.merchantUserId,
        actor: input.actor,
        createdAt: input.now,
      },
      guard,
    );
  const kyc = { kycStatus: input.status, verifiedAt: input.now, merchantUserId: input.merchantUserId };
  const withdrawLines = (borrowerRef: string, guard: SQL) =>
    db
      .update(creditLines)
      .set({ kycConfirmedAt: null, updatedAt: input.now })
      .where(and(eq(creditLines.tenantId, input.tenantId), eq(creditLines.borrowerRef, borrowerRef), isNotNull(creditLines.kycConfirmedAt), guard));
  const withdraws = input.status !== "VERIFIED";

  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await findBorrower(db, input.tenantId, input.idOrRef);
    if (!current) {
      // A new ref: the borrower is born with this status; its first audit row reads from PENDING, the
      // status every borrower starts with. If the same ref is created concurrently, the insert does
      // nothing, neither does the audit row (it needs this row's fresh id), and the next round updates.
      const id = newId();
      const born = sql`EXISTS (SELECT 1 FROM ${borrowers} WHERE ${borrowers.id} = ${id})`;
      const [created] = await db.batch([
        db
          .insert(borrowers)
          .values({ id, tenantId: input.tenantId, borrowerRef: input.idOrRef, ...kyc, createdAt: input.now, updatedAt: input.now })
          .onConflictDoNothing({ target: [borrowers.tenantId, borrowers.borrowerRef] })
          .returning(),
        audit(id, "PENDING", born),
        // A line may name a ref before its borrower exists (a sandbox key's confirmation once certified).
        ...(withdraws ? [withdrawLines(input.idOrRef, born)] : []),
      ]);
      if (created.length === 1) return { borrower: created[0]!, audit: await auditOf(db, input.tenantId, id) };
      continue;
    }
    // Strictly later than the read, even within one millisecond: the next writer's condition must see a change.
    const updatedAt = new Date(Math.max(input.now.getTime(), current.updatedAt.getTime() + 1));
    const unchanged = sql`EXISTS (SELECT 1 FROM ${borrowers} WHERE ${unchangedSince(current)})`;
    const results = await db.batch([
      // The audit row and the lines first: they test the same, not yet changed, row as the update.
      audit(current.id, current.kycStatus, unchanged),
      ...(withdraws ? [withdrawLines(current.borrowerRef, unchanged)] : []),
      db
        .update(borrowers)
        .set({ ...kyc, updatedAt })
        .where(unchangedSince(current))
        .returning(),
    ]);
    const updated = results.at(-1) as BorrowerRow[];
    if (updated.length === 1) return { borrower: updated[0]!, audit: await auditOf(db, input.tenantId, current.id) };
  }
  throw conflict("The borrower's KYC changed at the same time, repeatedly; retry");
}
