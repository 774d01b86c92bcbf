import type { LoanRow } from "../../db/schema/loans.ts";
import { tenantClock } from "../tenants/tenant-context.ts";
import { decideLoan } from "./decide-loan.ts";
import { fundLoan, reservationOnApproval } from "./fund-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { type LoanFacts, readForProcessing } from "./processing-reads.ts";

/**
 * Moves a loan as far as it can go now: underwrite it if it has no decision,
 * then fund it if it is approved and fundable. Idempotent: a loan that is
 * decided and funded (or waiting) is returned as it is, so replays of a
 * creation, duplicate messages and retries are all safe to process again.
 *
 * Its reads are one round trip with the loan's `facts` (its creator's), two
 * without; then one guarded commit per transition: the decision (with the
 * reservation of an approved loan's principal, in the same batch), then,
 * after the chain transfer, the funding.
 */
export async function processLoan(deps: LoanContext, input: { tenantId: string; loanId: string; facts?: LoanFacts }): Promise<LoanRow> {
  const { tenant, loan: read, underwriting, pool } = await readForProcessing(deps.db, input);
  let loan = read;
  const clock = tenantClock(deps.clock, tenant, loan.mode);
  if (loan.status === "CREATED" && loan.decisionOutcome === null) {
    const now = clock.now();
    // An approval that funding would follow commits with its reservation (one batch); fundLoan then goes on from RESERVED.
    loan = await decideLoan(deps, { loan, now, reads: underwriting, followUp: reservationOnApproval(deps.db, pool, now) });
  }
  return fundLoan(deps, { loan, tenant, now: clock.now(), pool });
}
