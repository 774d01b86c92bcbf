import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { agreements } from "../../db/schema/loan-records.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { loanView } from "../loans/loan-view.ts";

type AgreementRow = typeof agreements.$inferSelect;

/** A loan's agreement as the API shows it (`LoanAgreementSchema`). */
export function agreementView(row: AgreementRow) {
  return {
    id: row.id,
    challengeId: row.challengeId,
    walletAddress: row.walletAddress,
    chain: row.chain,
    message: row.message,
    agreementText: row.agreementText,
    walletSignature: row.walletSignature,
    publicKey: row.publicKey,
    timestamp: row.signedTimestamp,
    domain: row.domain,
    createdAt: row.createdAt.toISOString(),
  };
}

export type AgreementView = ReturnType<typeof agreementView>;

/** The agreement on file for a loan, or null (no read when the loan links none). */
export async function loanAgreement(db: Db, loan: Pick<LoanRow, "id" | "tenantId" | "agreementId">): Promise<AgreementView | null> {
  if (!loan.agreementId) return null;
  const [row] = await db
    .select()
    .from(agreements)
    .where(and(eq(agreements.tenantId, loan.tenantId), eq(agreements.loanId, loan.id)))
    .limit(1);
  return row ? agreementView(row) : null;
}

/**
 * The loan as one loan's routes show it: `loanView` plus its `agreement`
 * (the signed message, signature and TON Connect fields; null when none is
 * on file). Lists and event payloads omit `agreement`: it costs a read per
 * loan and its text can be long; GET /v1/loans/:id has it.
 */
export async function loanDetailView(db: Db, loan: LoanRow, now: Date) {
  return { ...loanView(loan, now), agreement: await loanAgreement(db, loan) };
}
