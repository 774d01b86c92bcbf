import type { LoanRow } from "../../db/schema/loans.ts";
import { displayAmount, formatAmount } from "../domain/money.ts";
import { lateFeeDays, totalDueUnits } from "../domain/pricing.ts";

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** Late-fee days at `now`: accrual stops when the loan is repaid (and at the default moment). */
export function currentLateFeeDays(loan: LoanRow, now: Date): number {
  const at = loan.repaidAt && loan.repaidAt < now ? loan.repaidAt : now;
  return Math.max(loan.lateFeeDays, lateFeeDays(loan.dueAt, at, loan.gracePeriodDays));
}

/**
 * What a payment made at `at` settles (shared/settlement/apply-repayment.ts):
 * the total due at that moment, its late-fee days counted by the clock alone,
 * so days a sweep recorded later never count (the sweep may run before the
 * listener sees a payment made earlier); and what remains of it after the
 * payments credited so far.
 */
export function owedAt(loan: LoanRow, at: Date) {
  const lateDays = lateFeeDays(loan.dueAt, at, loan.gracePeriodDays);
  const totalDue = totalDueUnits({ principal: loan.principal, processingFee: loan.processingFee, dailyLateFee: loan.dailyLateFee, lateDays });
  return { lateDays, totalDue, remaining: loan.paid >= totalDue ? 0n : totalDue - loan.paid };
}

/**
 * What the borrower owes at `now`: the total (principal + processing fee +
 * accrued late fees) and what remains of it after partial payments.
 */
export function amountsAt(loan: LoanRow, now: Date) {
  const lateDays = currentLateFeeDays(loan, now);
  const lateFee = loan.dailyLateFee * BigInt(lateDays);
  const totalDue = totalDueUnits({ principal: loan.principal, processingFee: loan.processingFee, dailyLateFee: loan.dailyLateFee, lateDays });
  const remaining = loan.status === "REPAID" || loan.paid >= totalDue ? 0n : totalDue - loan.paid;
  return { lateDays, lateFee, totalDue, remaining };
}

/**
 * The loan as the API (and `data.loan` of every event) shows it, with the
 * fields of DECISIONS.md "Loans". Late fees and total due are computed at
 * `now`, the tenant's clock.
 */
export function loanView(loan: LoanRow, now: Date) {
  const { lateDays, lateFee, totalDue, remaining } = amountsAt(loan, now);
  const declined = loan.status === "CREATED" && loan.decisionOutcome === "DECLINED";
  return {
    id: loan.id,
    status: loan.status,
    /** The status the dashboard and the DECLINED filter show: DECLINED for a declined CREATED loan. */
    derivedStatus: declined ? ("DECLINED" as const) : loan.status,
    loanProductId: loan.loanProductId,
    borrowerId: loan.borrowerId,
    borrowerRef: loan.borrowerRef,
    borrowerWalletAddress: loan.borrowerWalletAddress,
    chain: loan.chain,
    mode: loan.mode,
    stablecoin: loan.stablecoin,
    principalAmount: formatAmount(loan.principal),
    processingFee: formatAmount(loan.processingFee),
    lateFee: formatAmount(lateFee),
    dailyLateFee: formatAmount(loan.dailyLateFee),
    lateFeeDays: lateDays,
    totalDue: formatAmount(totalDue),
    amountPaid: displayAmount(loan.paid),
    // Owed only once the principal went out: a declined loan, or one still waiting for KYC, review or liquidity, owes nothing.
    amountDue: displayAmount(loan.fundedAt ? remaining : 0n),
    surplus: displayAmount(loan.surplus),
    tenureDays: loan.tenureDays,
    gracePeriodDays: loan.gracePeriodDays,
    decision: loan.decisionOutcome
      ? {
          outcome: loan.decisionOutcome,
          reasons: loan.decisionReasons ?? [],
          policyVersion: loan.policyVersion,
          decidedAt: isoOrNull(loan.decidedAt),
          reviewedBy: loan.reviewedBy,
          reviewedAt: isoOrNull(loan.reviewedAt),
          reviewNote: loan.reviewNote,
        }
      : null,
    fundingState: loan.fundingState,
    kycGate: { required: loan.requiresKycGate, kycConfirmed: loan.kycConfirmedAt !== null, agreementRecorded: loan.agreementId !== null },
    overdue: loan.overdueAt !== null,
    dueAt: isoOrNull(loan.dueAt),
    fundedAt: isoOrNull(loan.fundedAt),
    repaidAt: isoOrNull(loan.repaidAt),
    defaultedAt: isoOrNull(loan.defaultedAt),
    createdAt: loan.createdAt.toISOString(),
    updatedAt: loan.updatedAt.toISOString(),
    idempotencyKey: loan.idempotencyKey,
    program: loan.programId,
    channel: loan.channel,
    fundingTxHash: loan.fundingTxHash,
  };
}

export type LoanView = ReturnType<typeof loanView>;
