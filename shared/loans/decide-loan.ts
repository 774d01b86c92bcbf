import { and, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { borrowers } from "../../db/schema/borrowers.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { underwrite } from "../domain/underwriting.ts";
import { currentPolicy } from "../underwriting/policies.ts";
import type { VerbDeps } from "../verbs.ts";
import { loanIsOpen } from "./open-loans.ts";
import { commitTransition } from "./commit-transition.ts";

/**
 * The borrower's other open loans (unpaid) of the same mode: CREATED and
 * not declined, ACTIVE, or DEFAULTED. Read through the (tenant, borrower, status) index.
 */
async function openLoansOf(db: Db, loan: LoanRow): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)` })
    .from(loans)
    // Of the loan's own mode (DECISIONS.md "Modes"): a sandbox test loan never blocks a live one.
    .where(and(eq(loans.tenantId, loan.tenantId), eq(loans.borrowerId, loan.borrowerId), eq(loans.mode, loan.mode), ne(loans.id, loan.id), loanIsOpen()));
  return Number(row?.n ?? 0);
}

/**
 * Underwrites a loan that has no decision yet with the tenant's current
 * policy and records the decision with `loan.decision` (SPEC.md: after
 * `loan.application_submitted`, which creation recorded).
 */
export async function decideLoan({ db }: Pick<VerbDeps, "db">, { loan, now }: { loan: LoanRow; now: Date }): Promise<LoanRow> {
  const [policy, borrower, open, settings] = await Promise.all([
    currentPolicy(db, loan.tenantId),
    db.select({ kycStatus: borrowers.kycStatus }).from(borrowers).where(eq(borrowers.id, loan.borrowerId)).limit(1),
    openLoansOf(db, loan),
    db
      .select({ requiresKycBeforeFunding: tenantSettings.requiresKycBeforeFunding })
      .from(tenantSettings)
      .where(eq(tenantSettings.tenantId, loan.tenantId))
      .limit(1),
  ]);
  const decision = underwrite(
    policy,
    {
      principal: loan.principal,
      walletAddress: loan.borrowerWalletAddress,
      borrowerKycStatus: borrower[0]?.kycStatus ?? "PENDING",
      openLoansOfBorrower: open,
      live: loan.mode === "live",
      requiresKycBeforeFunding: settings[0]?.requiresKycBeforeFunding ?? false,
    },
    now,
  );
  return commitTransition(db, {
    loan,
    trigger: { kind: "DECIDE", outcome: decision.outcome },
    now,
    set: { decisionReasons: decision.reasons, policyVersion: decision.policyVersion, decidedAt: decision.decidedAt },
  });
}
