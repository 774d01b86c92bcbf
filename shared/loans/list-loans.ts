import { and, eq, gte, isNull, lte, ne, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { loans } from "../../db/schema/loans.ts";
import type { Chain, TenantMode } from "../domain/rails.ts";
import type { DECISION_OUTCOMES } from "../domain/vocabularies.ts";
import type { VerbDeps } from "../verbs.ts";

export const LOAN_LIST_STATUSES = ["CREATED", "ACTIVE", "REPAID", "DEFAULTED", "DECLINED"] as const;
export type LoanListStatus = (typeof LOAN_LIST_STATUSES)[number];

export type LoanFilters = {
  /** A key's own mode (DECISIONS.md "Modes"); none: both. */
  mode?: TenantMode;
  status?: LoanListStatus;
  borrowerRef?: string;
  /** The underwriting outcome now (MANUAL_REVIEW: the review queue; a reviewed loan is APPROVED or DECLINED). */
  decision?: (typeof DECISION_OUTCOMES)[number];
  /** Canonical form (as stored), so the comparison is exact. */
  borrowerWalletAddress?: string;
  chain?: Chain;
  createdFrom?: Date;
  createdTo?: Date;
};

/**
 * The rows of a status filter, as conditions on status and decision. The
 * derived DECLINED state (SPEC.md "Synthetic DECLINED state"): a declined
 * loan stays CREATED; the CREATED filter leaves declined loans out. Only an
 * APPROVED loan is ever funded (the state machine's FUND), so ACTIVE, REPAID
 * and DEFAULTED loans are APPROVED ones: saying so lets a list without a mode
 * (a session's) read the range (tenant_id, status, decision_outcome,
 * created_at) in order. `decision` is the decision column as the caller
 * wants it compared (`+decision_outcome` where another index should serve).
 */
function statusCondition(status: LoanListStatus, decision: SQL): SQL | undefined {
  const created = eq(loans.status, "CREATED");
  if (status === "DECLINED") return and(created, eq(loans.decisionOutcome, "DECLINED"));
  if (status === "CREATED") return and(created, or(isNull(loans.decisionOutcome), ne(loans.decisionOutcome, "DECLINED")));
  return and(eq(loans.status, status), sql`${decision} = 'APPROVED'`);
}

/** A loan with no decision yet, in review or declined is CREATED (only an approved loan moves on). */
const STILL_CREATED: readonly string[] = ["MANUAL_REVIEW", "DECLINED"];

type ListLoansInput = { tenantId: string; filters: LoanFilters; limit: number; cursor?: string };

/**
 * The tenant's loans, newest first, with DECISIONS.md's filters (one more
 * row than the page, to know if there is a next). Each filter reads its own
 * range (migration 0024), never the tenant's whole history, whatever its
 * length. SQLite has no statistics on D1 and ties indexes that match as many
 * equality terms, so a term another index should serve is written with a
 * `+` (never read through an index):
 * - a borrower's ref or wallet: (tenant_id, borrower_ref |
 *   borrower_wallet_address, created_at), with `+mode`;
 * - the DECLINED status, and the MANUAL_REVIEW and DECLINED decisions (the
 *   review queue), loans that are still CREATED: (tenant_id, status =
 *   CREATED, decision_outcome, created_at), with `+mode`;
 * - another status: (tenant_id, mode, status, created_at), or without a mode
 *   (tenant_id, status, decision_outcome = APPROVED, created_at) for
 *   ACTIVE, REPAID and DEFAULTED (CREATED without a mode, a session's
 *   rare list, still walks the tenant's loans: its rows are every decision
 *   but one, which no single range of the index holds in order);
 * - otherwise (tenant_id, mode, created_at) or (tenant_id, created_at).
 * The plans are tested (history-plans.test.ts).
 */
export function loansPageQuery(db: Db, input: ListLoansInput) {
  const { filters } = input;
  const page = newestFirst(loans, input.cursor);
  const byBorrower = filters.borrowerRef !== undefined || filters.borrowerWalletAddress !== undefined;
  const stillCreated = filters.status === "DECLINED" || (filters.decision !== undefined && STILL_CREATED.includes(filters.decision));
  const plusMode = byBorrower || stillCreated;
  const mode = filters.mode === undefined ? undefined : plusMode ? sql`+${loans.mode} = ${filters.mode}` : eq(loans.mode, filters.mode);
  // With a mode, an ACTIVE, REPAID or DEFAULTED filter reads (tenant_id, mode, status): its implied decision is `+`.
  const decisionColumn = filters.mode === undefined ? sql`${loans.decisionOutcome}` : sql`+${loans.decisionOutcome}`;
  return db
    .select()
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, input.tenantId),
        mode,
        filters.status ? statusCondition(filters.status, decisionColumn) : stillCreated ? eq(loans.status, "CREATED") : undefined,
        filters.borrowerRef ? eq(loans.borrowerRef, filters.borrowerRef) : undefined,
        filters.decision ? eq(loans.decisionOutcome, filters.decision) : undefined,
        filters.borrowerWalletAddress ? eq(loans.borrowerWalletAddress, filters.borrowerWalletAddress) : undefined,
        filters.chain ? eq(loans.chain, filters.chain) : undefined,
        filters.createdFrom ? gte(loans.createdAt, filters.createdFrom) : undefined,
        filters.createdTo ? lte(loans.createdAt, filters.createdTo) : undefined,
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
}

/** The tenant's loans, newest first, with DECISIONS.md's filters: a page, and the cursor of the next. */
export async function listLoans({ db }: Pick<VerbDeps, "db">, input: ListLoansInput) {
  return pageOf(await loansPageQuery(db, input), input.limit);
}
