import type { LoanRow } from "../../db/schema/loans.ts";
import { DomainError } from "../domain/errors.ts";
import { tenantClock } from "../tenants/tenant-context.ts";
import { decideLoan } from "./decide-loan.ts";
import { fundLoan, reservationOnApproval } from "./fund-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { type LoanFacts, readForProcessing } from "./processing-reads.ts";

/**
 * A loan as its creation committed it (create-loan.ts), handed to its
 * writer by the request that created it, with the tenant's clock offset.
 */
export type CreatedLoan = { loan: LoanRow; clockOffsetMs: number };

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
 *
 * With `created` (the loan just inserted, decided and reserved in its
 * creation's batch) it reads nothing: it funds from that row, whose write
 * token no one else can have moved unless another command of the loan ran
 * in between; then the funding's commit does not hold (409) and the loan is
 * processed again from fresh reads. The transfer is keyed by the loan
 * (`funding:<loanId>`), so that second pass finds the same transaction.
 */
export async function processLoan(deps: LoanContext, input: { tenantId: string; loanId: string; facts?: LoanFacts; created?: CreatedLoan }): Promise<LoanRow> {
  const { created } = input;
  if (created && fundsAsCreated(created.loan, input)) {
    const { loan, clockOffsetMs } = created;
    const now = tenantClock(deps.clock, { clockOffsetMs }, loan.mode).now();
    try {
      return await fundLoan(deps, { loan, tenant: { id: loan.tenantId }, now });
    } catch (err) {
      if (!(err instanceof DomainError && err.kind === "CONFLICT")) throw err;
    }
  }
  const { tenant, loan: read, underwriting, pool } = await readForProcessing(deps.db, input);
  let loan = read;
  const clock = tenantClock(deps.clock, tenant, loan.mode);
  if (loan.status === "CREATED" && loan.decisionOutcome === null) {
    const now = clock.now();
    // An approval that funding would follow commits with its reservation (one batch); fundLoan then goes on from RESERVED.
    loan = await decideLoan(deps, { loan, now, reads: underwriting, followUp: reservationOnApproval(deps.db, pool, now, underwriting) });
  }
  return fundLoan(deps, { loan, tenant, now: clock.now(), pool, reads: underwriting });
}

/** The created row is the loan's, approved and holding its reservation in sandbox: funding goes on from it as it is. */
const fundsAsCreated = (loan: LoanRow, input: { tenantId: string; loanId: string }): boolean =>
  loan.id === input.loanId &&
  loan.tenantId === input.tenantId &&
  loan.status === "CREATED" &&
  loan.decisionOutcome === "APPROVED" &&
  loan.fundingState === "RESERVED" &&
  loan.mode === "sandbox";
