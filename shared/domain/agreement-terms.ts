import { formatAmount } from "./money.ts";

/**
 * What a borrower agrees to pay, as the agreement message states it
 * (loan-agreements.ts `agreementMessage`): the total due at the due date,
 * the late fee charged per started day past it (DECISIONS.md "Fees"), and
 * the days after it before the loan defaults (the grace period). A widget
 * draw is priced at its quote and created at its accept: the loan is made
 * only on the terms its borrower signed (`sameTerms`), never on a price the
 * merchant changed in between.
 */
export type AgreementTerms = { totalDue: string; dailyLateFee: string; gracePeriodDays: number };

/** The terms of a loan, or of a draw priced from its product. */
export const termsOf = (l: { principal: bigint; processingFee: bigint; dailyLateFee: bigint; gracePeriodDays: number }): AgreementTerms => ({
  totalDue: formatAmount(l.principal + l.processingFee),
  dailyLateFee: formatAmount(l.dailyLateFee),
  gracePeriodDays: l.gracePeriodDays,
});

export const sameTerms = (a: AgreementTerms, b: AgreementTerms): boolean =>
  a.totalDue === b.totalDue && a.dailyLateFee === b.dailyLateFee && a.gracePeriodDays === b.gracePeriodDays;

/**
 * Why a draw signed on `signed` cannot be made on `now`'s terms (one message,
 * naming what changed), or null when they are the same.
 *
 * @example termsChanged({ totalDue: "102.00", dailyLateFee: "1.00", gracePeriodDays: 3 }, { totalDue: "110.00", dailyLateFee: "1.00", gracePeriodDays: 3 })
 * // "agreementChallengeId: the merchant's terms changed since the quote (total due 102.00 → 110.00); quote again and sign the new terms"
 */
export function termsChanged(signed: AgreementTerms, now: AgreementTerms): string | null {
  if (sameTerms(signed, now)) return null;
  const changes = [
    signed.totalDue !== now.totalDue ? `total due ${signed.totalDue} → ${now.totalDue}` : null,
    signed.dailyLateFee !== now.dailyLateFee ? `late fee per day ${signed.dailyLateFee} → ${now.dailyLateFee}` : null,
    signed.gracePeriodDays !== now.gracePeriodDays ? `days before default ${signed.gracePeriodDays} → ${now.gracePeriodDays}` : null,
  ].filter((c): c is string => c !== null);
  return `agreementChallengeId: the merchant's terms changed since the quote (${changes.join(", ")}); quote again and sign the new terms`;
}
