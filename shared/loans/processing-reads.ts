import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { preparedReads, placeholderAs } from "../../db/prepared-batch.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import type { Stablecoin, TenantMode } from "../domain/rails.ts";
import { isUuid } from "../domain/ids.ts";
import { poolQuery, type PoolRow } from "../liquidity/pools.ts";
import type { LoadedTenant } from "../tenants/tenant-context.ts";
import { type UnderwritingReads, underwritingQueries, underwritingReadsOf } from "./decide-loan.ts";
import { loadLoan } from "./load-loan.ts";

/**
 * What never changes about a loan once it is created, and what processing's
 * reads depend on: its borrower, mode and stablecoin. The creator passes
 * them along with the `process` command, so the loan object reads everything
 * in one round trip; they are checked against the loan it reads.
 */
export type LoanFacts = Pick<LoanRow, "borrowerId" | "mode" | "stablecoin">;

export const loanFacts = (loan: LoanFacts): LoanFacts => ({ borrowerId: loan.borrowerId, mode: loan.mode, stablecoin: loan.stablecoin });

/** Everything `processLoan` reads before it writes. */
export type ProcessingReads = { tenant: LoadedTenant; loan: LoanRow; underwriting: UnderwritingReads; pool: PoolRow | null };

/** The reads of `readForProcessing`, built once per database (db/prepared-batch.ts). */
const processingReads = preparedReads((db: Db) => {
  const tenantId = placeholderAs<string>("tenantId");
  const loanId = placeholderAs<string>("loanId");
  const mode = placeholderAs<TenantMode>("mode");
  return [
    db.select().from(tenants).where(eq(tenants.id, tenantId)).limit(1),
    db.select({ requiresKycBeforeFunding: tenantSettings.requiresKycBeforeFunding }).from(tenantSettings).where(eq(tenantSettings.tenantId, tenantId)).limit(1),
    db
      .select()
      .from(loans)
      .where(and(eq(loans.id, loanId), eq(loans.tenantId, tenantId)))
      .limit(1),
    ...underwritingQueries(db, { id: loanId, tenantId, borrowerId: placeholderAs<string>("borrowerId"), mode }),
    poolQuery(db, { tenantId, mode }, placeholderAs<Stablecoin>("stablecoin")),
  ] as const;
});

/**
 * The tenant (with its KYC setting), the loan as it is now, what
 * underwriting reads and the pool funding would reserve in: one D1 round
 * trip (a batch of reads). Without `facts`, the loan is read first (two
 * round trips). The pool is a snapshot like any other: the reservation
 * itself is conditional on the pool's headroom when it commits.
 */
export async function readForProcessing(db: Db, input: { tenantId: string; loanId: string; facts?: LoanFacts }): Promise<ProcessingReads> {
  const { tenantId, loanId } = input;
  if (!isUuid(loanId)) throw notFound("Loan");
  const facts = input.facts ?? loanFacts(await loadLoan(db, tenantId, loanId));
  const [tenantRows, settingsRows, loanRows, policy, borrower, open, pool] = await processingReads(db, {
    tenantId,
    loanId,
    borrowerId: facts.borrowerId,
    mode: facts.mode,
    stablecoin: facts.stablecoin,
  });
  const tenant = tenantRows[0];
  if (!tenant) throw notFound("Tenant");
  const loan = loanRows[0];
  if (!loan) throw notFound("Loan");
  if (loan.borrowerId !== facts.borrowerId || loan.mode !== facts.mode || loan.stablecoin !== facts.stablecoin) {
    throw new DomainError("INTERNAL", "the loan's facts passed to its processing are not the loan's");
  }
  const requiresKycBeforeFunding = settingsRows[0]?.requiresKycBeforeFunding ?? false;
  return {
    tenant: { ...tenant, requiresKycBeforeFunding },
    loan,
    underwriting: underwritingReadsOf([policy, borrower, open], requiresKycBeforeFunding),
    pool: pool[0] ?? null,
  };
}
