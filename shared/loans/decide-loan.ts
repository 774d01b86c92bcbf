import { and, eq, ne, sql, type SQL } from "drizzle-orm";
import type { BatchResults } from "../../db/batch-columns.ts";
import type { Db } from "../../db/create-db.ts";
import { borrowers } from "../../db/schema/borrowers.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { policies } from "../../db/schema/policies.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import {
  type DecisionReason,
  DEFAULT_POLICY,
  fundingHoldReasons,
  underwrite,
  type UnderwritingInput,
  type UnderwritingPolicy,
} from "../domain/underwriting.ts";
import { currentPolicyQuery, policyOf } from "../underwriting/policies.ts";
import type { VerbDeps } from "../verbs.ts";
import { loanIsOpen } from "./open-loans.ts";
import { commitTransition, type TransitionPlan } from "./commit-transition.ts";

/** What underwriting a loan reads besides the loan: its tenant's policy and KYC setting, its borrower's KYC status and other open loans. */
export type UnderwritingReads = {
  policy: UnderwritingPolicy;
  borrowerKycStatus: UnderwritingInput["borrowerKycStatus"];
  openLoansOfBorrower: number;
  requiresKycBeforeFunding: boolean;
};

/** The loan's facts its underwriting reads depend on (they never change once it is created). */
type UnderwrittenLoan = Pick<LoanRow, "id" | "tenantId" | "borrowerId" | "mode">;

/**
 * The selects underwriting needs, for one batch: the current policy, the
 * borrower's KYC status, and the count of the borrower's other open loans
 * (unpaid) of the same mode: CREATED and not declined, ACTIVE, or
 * DEFAULTED, read through the (tenant, borrower, status) index.
 * `underwritingReadsOf` reads their rows.
 */
export const underwritingQueries = (db: Db, loan: UnderwrittenLoan) =>
  [
    currentPolicyQuery(db, loan.tenantId),
    db.select({ kycStatus: borrowers.kycStatus }).from(borrowers).where(eq(borrowers.id, loan.borrowerId)).limit(1),
    openLoansOfBorrowerQuery(db, { tenantId: loan.tenantId, borrowerId: loan.borrowerId, mode: loan.mode, otherThan: loan.id }),
  ] as const;

/**
 * The count (`n`) of a borrower's open loans of one mode, other than
 * `otherThan` when given: what underwriting compares with
 * `maxOpenLoansPerBorrower`. Of the loan's own mode (DECISIONS.md "Modes"):
 * a sandbox test loan never blocks a live one. `borrowerId` may be a
 * subquery (creation reads it by the borrower's ref).
 */
/**
 * SQL: the id of the tenant's borrower of `borrowerRef` (NULL when there is
 * none), for counting by ref through the borrower's index: `loans` holds
 * the ref too, but no index that reads one borrower's loans by it.
 */
export const borrowerIdOfRef = (tenantId: string | SQL, borrowerRef: string | SQL): SQL =>
  sql`(SELECT ${borrowers.id} FROM ${borrowers} WHERE ${borrowers.tenantId} = ${tenantId} AND ${borrowers.borrowerRef} = ${borrowerRef})`;

export const openLoansOfBorrowerQuery = (db: Db, q: { tenantId: string; borrowerId: string | SQL; mode: LoanRow["mode"]; otherThan?: string }) =>
  db
    .select({ n: sql<number>`count(*)` })
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, q.tenantId),
        eq(loans.borrowerId, q.borrowerId as string),
        eq(loans.mode, q.mode),
        q.otherThan === undefined ? undefined : ne(loans.id, q.otherThan),
        loanIsOpen(),
      ),
    );

type UnderwritingRows = BatchResults<ReturnType<typeof underwritingQueries>>;

export const underwritingReadsOf = ([policy, borrower, open]: UnderwritingRows, requiresKycBeforeFunding: boolean): UnderwritingReads => ({
  policy: policyOf(policy),
  borrowerKycStatus: borrower[0]?.kycStatus ?? "PENDING",
  openLoansOfBorrower: Number(open[0]?.n ?? 0),
  requiresKycBeforeFunding,
});

/** Underwriting's reads in one round trip (with the tenant's KYC setting). */
export async function readForUnderwriting(db: Db, loan: LoanRow): Promise<UnderwritingReads> {
  const [policy, borrower, open, settings] = await db.batch([
    ...underwritingQueries(db, loan),
    db
      .select({ requiresKycBeforeFunding: tenantSettings.requiresKycBeforeFunding })
      .from(tenantSettings)
      .where(eq(tenantSettings.tenantId, loan.tenantId))
      .limit(1),
  ]);
  return underwritingReadsOf([policy, borrower, open], settings[0]?.requiresKycBeforeFunding ?? false);
}

/**
 * Underwrites a loan that has no decision yet with the tenant's current
 * policy and records the decision with `loan.decision` (SPEC.md: after
 * `loan.application_submitted`, which creation recorded). `reads`: what
 * underwriting reads, when the caller read it already (processing reads it
 * with the loan, in one round trip). `followUp`: a change committed in the
 * decision's own batch (processing's reservation of an approved loan).
 */
export async function decideLoan(
  { db }: Pick<VerbDeps, "db">,
  { loan, now, reads, followUp }: { loan: LoanRow; now: Date; reads?: UnderwritingReads; followUp?: TransitionPlan["followUp"] },
): Promise<LoanRow> {
  return commitTransition(db, decisionPlan({ loan, now, reads: reads ?? (await readForUnderwriting(db, loan)), followUp }));
}

/**
 * The decision of an undecided loan as a transition to commit: underwriting
 * with the tenant's current policy (`reads`), recorded with `loan.decision`.
 * `decideLoan` commits it alone; creation commits it in the loan's own
 * insert batch (create-loan.ts).
 */
export function decisionPlan({
  loan,
  now,
  reads,
  followUp,
}: {
  loan: LoanRow;
  now: Date;
  reads: UnderwritingReads;
  followUp?: TransitionPlan["followUp"];
}): TransitionPlan {
  const { policy, borrowerKycStatus, openLoansOfBorrower, requiresKycBeforeFunding } = reads;
  const decision = underwrite(
    policy,
    {
      principal: loan.principal,
      walletAddress: loan.borrowerWalletAddress,
      borrowerKycStatus,
      openLoansOfBorrower,
      live: loan.mode === "live",
      requiresKycBeforeFunding,
    },
    now,
  );
  return {
    loan,
    trigger: { kind: "DECIDE", outcome: decision.outcome },
    now,
    set: { decisionReasons: decision.reasons, policyVersion: decision.policyVersion, decidedAt: decision.decidedAt },
    followUp,
  };
}

/**
 * Why an approved loan's funding is held now, if it is: the decline rules
 * funding applies again (underwriting.ts RECHECKED_AT_FUNDING) over the
 * tenant's policy, settings and the borrower as they are now. The loan's own
 * KYC gate (`requiresKycGate`, fixed at its creation) counts as a KYC
 * requirement for the live rule. Empty when none fires.
 */
export function fundingHold(loan: LoanRow, reads: UnderwritingReads): DecisionReason[] {
  return fundingHoldReasons(reads.policy, {
    principal: loan.principal,
    walletAddress: loan.borrowerWalletAddress,
    borrowerKycStatus: reads.borrowerKycStatus,
    openLoansOfBorrower: reads.openLoansOfBorrower,
    live: loan.mode === "live",
    requiresKycBeforeFunding: reads.requiresKycBeforeFunding || loan.requiresKycGate,
  });
}

/**
 * SQL: what a funding hold was judged on is still so (the borrower's KYC
 * status, the current policy's version, the tenant's KYC setting), for the
 * reservation's condition: a KYC failure or a policy saved between the
 * judgement and the reservation makes the reservation not hold, and funding
 * judges again on fresh reads.
 */
export function holdFactsUnchanged(loan: Pick<LoanRow, "tenantId" | "borrowerId">, reads: UnderwritingReads): SQL {
  return sql`COALESCE((SELECT ${borrowers.kycStatus} FROM ${borrowers} WHERE ${borrowers.id} = ${loan.borrowerId}), 'PENDING') = ${reads.borrowerKycStatus}
    AND COALESCE((SELECT max(${policies.version}) FROM ${policies} WHERE ${policies.tenantId} = ${loan.tenantId}), ${DEFAULT_POLICY.version}) = ${reads.policy.version}
    AND COALESCE((SELECT ${tenantSettings.requiresKycBeforeFunding} FROM ${tenantSettings} WHERE ${tenantSettings.tenantId} = ${loan.tenantId}), 0) = ${reads.requiresKycBeforeFunding ? 1 : 0}`;
}
