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
 * The derived DECLINED state (SPEC.md "Synthetic DECLINED state"): a declined
 * loan stays CREATED; the CREATED filter leaves declined loans out.
 */
function statusCondition(status: LoanListStatus): SQL | undefined {
  if (status === "DECLINED") return and(eq(loans.status, "CREATED"), eq(loans.decisionOutcome, "DECLINED"));
  if (status === "CREATED") return and(eq(loans.status, "CREATED"), or(isNull(loans.decisionOutcome), ne(loans.decisionOutcome, "DECLINED")));
  return eq(loans.status, status);
}

type ListLoansInput = { tenantId: string; filters: LoanFilters; limit: number; cursor?: string };

/**
 * The tenant's loans, newest first, with DECISIONS.md's filters (one more
 * row than the page, to know if there is a next). Each filter reads its own
 * range (migration 0024), never the tenant's whole history: a borrower's ref
 * or wallet through (tenant_id, borrower_ref | borrower_wallet_address,
 * created_at), with the mode compared as `+mode` (SQLite never reads a `+`
 * term through an index, so (tenant_id, mode, created_at) does not tie with
 * it and win); a status of a mode through (tenant_id, mode, status,
 * created_at); otherwise (tenant_id, mode, created_at) or (tenant_id,
 * created_at). The plans are tested (history-plans.test.ts).
 */
export function loansPageQuery(db: Db, input: ListLoansInput) {
  const { filters } = input;
  const page = newestFirst(loans, input.cursor);
  const byBorrower = filters.borrowerRef !== undefined || filters.borrowerWalletAddress !== undefined;
  const mode = filters.mode === undefined ? undefined : byBorrower ? sql`+${loans.mode} = ${filters.mode}` : eq(loans.mode, filters.mode);
  return db
    .select()
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, input.tenantId),
        mode,
        filters.status ? statusCondition(filters.status) : undefined,
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
