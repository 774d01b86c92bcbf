import type { LoanRow } from "../../db/schema/loans.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";
import { commitTransition } from "./commit-transition.ts";
import { fundLoan } from "./fund-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { loadLoan } from "./load-loan.ts";

export type ReviewInput = { tenantId: string; loanId: string; action: "APPROVE" | "REJECT"; note: string | null; reviewerUserId: string };

/**
 * An ops reviewer actions a MANUAL_REVIEW loan (DECISIONS.md "Manual review"):
 * APPROVE → outcome APPROVED, `loan.approved`, then funding; REJECT → outcome
 * DECLINED, `loan.rejected`, no funds. Any other loan, or a second review: 409
 * (the transition table refuses it). Funding applies the decline rules about
 * the borrower again (fund-loan.ts): an approval whose borrower's KYC failed
 * since the application is approved and its funding held.
 */
export async function reviewLoan(deps: LoanContext, input: ReviewInput): Promise<LoanRow> {
  const tenant = await loadTenant(deps.db, input.tenantId);
  const loan = await loadLoan(deps.db, input.tenantId, input.loanId);
  const now = tenantClock(deps.clock, tenant, loan.mode).now();
  const reviewed = await commitTransition(deps.db, {
    loan,
    trigger: { kind: input.action === "APPROVE" ? "REVIEW_APPROVE" : "REVIEW_REJECT" },
    now,
    set: { reviewedBy: input.reviewerUserId, reviewedAt: now, reviewNote: input.note },
  });
  return input.action === "APPROVE" ? fundLoan(deps, { loan: reviewed, tenant, now }) : reviewed;
}
