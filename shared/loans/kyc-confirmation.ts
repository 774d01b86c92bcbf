import { insertIf } from "../../db/guarded-writes.ts";
import { loanKycConfirmations } from "../../db/schema/loan-records.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { conflict } from "../domain/errors.ts";
import { commitUpdate } from "./commit-transition.ts";
import { newId } from "../domain/ids.ts";
import type { VerbDeps } from "../verbs.ts";

export type KycConfirmationInput = { verified: boolean; merchantUserId: string | null; reference: string | null };

/**
 * Records the merchant's loan-level KYC confirmation (an immutable row) and
 * opens or closes the loan's KYC gate with it: the newest confirmation wins
 * for a loan that is not funded yet.
 */
export async function recordKycConfirmation({ db }: Pick<VerbDeps, "db">, { loan, now, ...input }: KycConfirmationInput & { loan: LoanRow; now: Date }) {
  const id = newId();
  const gate = loan.status === "CREATED" ? { kycConfirmedAt: input.verified ? (loan.kycConfirmedAt ?? now) : null } : {};
  const next = await commitUpdate(db, loan, gate, now, (guard) => [
    insertIf(
      db,
      loanKycConfirmations,
      {
        id,
        tenantId: loan.tenantId,
        loanId: loan.id,
        verified: input.verified,
        merchantUserId: input.merchantUserId,
        reference: input.reference,
        createdAt: now,
      },
      guard,
    ),
  ]);
  if (!next) throw conflict("The loan changed while the confirmation was being recorded; retry");
  return { loan: next, confirmation: { id, loanId: loan.id, ...input, createdAt: now } };
}
