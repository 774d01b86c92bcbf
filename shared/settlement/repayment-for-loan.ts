import type { LoanRow } from "../../db/schema/loans.ts";
import { repaymentInstructions, type TonRepaymentTarget } from "../chains/repayment-instructions.ts";
import { businessRule, conflict } from "../domain/errors.ts";
import { amountsAt } from "../loans/loan-view.ts";

/**
 * What the borrower signs or sends to repay the loan now (DECISIONS.md
 * "Repayment"): for ACTIVE and DEFAULTED loans only (409 otherwise), for the
 * amount due at `now` on the tenant's clock (late fees included, partial
 * payments deducted), so instructions are fetched at payment time. On live
 * TON, `ton` names the tenant's COLLECTIONS wallet (`tonRepaymentTarget`).
 */
export function repaymentFor(loan: LoanRow, now: Date, ton: TonRepaymentTarget = {}) {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") {
    throw conflict(`Only ACTIVE or DEFAULTED loans can be repaid; this loan is ${loan.status}`);
  }
  const { remaining } = amountsAt(loan, now);
  if (remaining <= 0n) throw conflict("Nothing is due on this loan");
  const instructions = repaymentInstructions({ loanId: loan.id, chain: loan.chain, totalDue: remaining, ...ton });
  if (!instructions.supported) throw businessRule(instructions.reason);
  return instructions;
}
