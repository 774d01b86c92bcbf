import type { LoanRow } from "../../db/schema/loans.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";
import { conflict } from "../domain/errors.ts";
import { commitTransition } from "./commit-transition.ts";
import { declineAtFunding, readForUnderwriting } from "./decide-loan.ts";
import { fundLoan } from "./fund-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { loadLoan } from "./load-loan.ts";

export type ReviewInput = { tenantId: string; loanId: string; action: "APPROVE" | "REJECT"; note: string | null; reviewerUserId: string };

/**
 * An ops reviewer actions a MANUAL_REVIEW loan (DECISIONS.md "Manual review"):
 * APPROVE → outcome APPROVED, `loan.approved`, then funding; REJECT → outcome
 * DECLINED, `loan.rejected`, no funds. Any other loan, or a second review: 409
 * (the transition table refuses it). An APPROVE that funding would decline at
 * once (a decline rule fires now, decide-loan.ts `declineAtFunding`): 409
 * naming why, and the loan keeps waiting for its review.
 */
export async function reviewLoan(deps: LoanContext, input: ReviewInput): Promise<LoanRow> {
  const tenant = await loadTenant(deps.db, input.tenantId);
  const loan = await loadLoan(deps.db, input.tenantId, input.loanId);
  const now = tenantClock(deps.clock, tenant, loan.mode).now();
  if (input.action === "APPROVE" && loan.status === "CREATED" && loan.decisionOutcome === "MANUAL_REVIEW") {
    // An approval funding would decline at once (the borrower's KYC failed, the wallet blocked since the application):
    // the reviewer is told, and the loan keeps waiting for a decision (REJECT, or APPROVE once the borrower is fixed).
    const decline = declineAtFunding(loan, await readForUnderwriting(deps.db, loan), now);
    if (decline) throw conflict(`The loan cannot be approved: ${decline.reasons.map((r) => r.message).join("; ")}. Reject it, or fix this first.`);
  }
  const reviewed = await commitTransition(deps.db, {
    loan,
    trigger: { kind: input.action === "APPROVE" ? "REVIEW_APPROVE" : "REVIEW_REJECT" },
    now,
    set: { reviewedBy: input.reviewerUserId, reviewedAt: now, reviewNote: input.note },
  });
  return input.action === "APPROVE" ? fundLoan(deps, { loan: reviewed, tenant, now }) : reviewed;
}
