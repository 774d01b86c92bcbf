import type { LoanRow } from "../../db/schema/loans.ts";
import { notFound } from "../domain/errors.ts";
import { loadLoan } from "../loans/load-loan.ts";
import { loanView } from "../loans/loan-view.ts";
import type { VerbDeps } from "../verbs.ts";
import type { ProgramContext } from "./program-context.ts";

/**
 * A loan drawn through the embed key's program. Any other loan (another
 * tenant's, another program's, an API loan) answers exactly as an unknown
 * id does: 404 "Loan not found".
 */
export async function loadProgramLoan({ db }: Pick<VerbDeps, "db">, { program, loanId }: { program: ProgramContext; loanId: string }): Promise<LoanRow> {
  const loan = await loadLoan(db, program.tenant.id, loanId);
  if (loan.programId !== program.program.id) throw notFound("Loan");
  return loan;
}

/**
 * A loan as the borrower's screens see it (the embed `loans/:id` and the
 * accept): named fields of the API view, so nothing of the merchant's
 * (borrowerRef, borrowerId, idempotencyKey, product, policy, review) leaks,
 * nor any field the API view gains later.
 */
export function embedLoanView(loan: LoanRow, now: Date) {
  const v = loanView(loan, now);
  return {
    id: v.id,
    status: v.status,
    derivedStatus: v.derivedStatus,
    borrowerWalletAddress: v.borrowerWalletAddress,
    chain: v.chain,
    stablecoin: v.stablecoin,
    principalAmount: v.principalAmount,
    processingFee: v.processingFee,
    lateFee: v.lateFee,
    dailyLateFee: v.dailyLateFee,
    lateFeeDays: v.lateFeeDays,
    totalDue: v.totalDue,
    amountPaid: v.amountPaid,
    amountDue: v.amountDue,
    surplus: v.surplus,
    tenureDays: v.tenureDays,
    gracePeriodDays: v.gracePeriodDays,
    decision: v.decision ? { outcome: v.decision.outcome, reasons: v.decision.reasons } : null,
    fundingState: v.fundingState,
    overdue: v.overdue,
    dueAt: v.dueAt,
    fundedAt: v.fundedAt,
    repaidAt: v.repaidAt,
    defaultedAt: v.defaultedAt,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
    program: v.program,
    channel: v.channel,
    fundingTxHash: v.fundingTxHash,
  };
}
