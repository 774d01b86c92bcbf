import type { LoanRow } from "../../db/schema/loans.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";
import { decideLoan } from "./decide-loan.ts";
import { fundLoan } from "./fund-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { loadLoan } from "./load-loan.ts";

/**
 * Moves a loan as far as it can go now: underwrite it if it has no decision,
 * then fund it if it is approved and fundable. Idempotent: a loan that is
 * decided and funded (or waiting) is returned as it is, so replays of a
 * creation, duplicate messages and retries are all safe to process again.
 */
export async function processLoan(deps: LoanContext, { tenantId, loanId }: { tenantId: string; loanId: string }): Promise<LoanRow> {
  const tenant = await loadTenant(deps.db, tenantId);
  let loan = await loadLoan(deps.db, tenantId, loanId);
  const clock = tenantClock(deps.clock, tenant, loan.mode);
  if (loan.status === "CREATED" && loan.decisionOutcome === null) loan = await decideLoan(deps, { loan, now: clock.now() });
  return fundLoan(deps, { loan, tenant, now: clock.now() });
}
