import { and, eq, gte, isNull, lte, ne, or, type SQL } from "drizzle-orm";
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

/**
 * The tenant's loans, newest first, with DECISIONS.md's filters. Reads go
 * through (tenant_id, status, decision_outcome, created_at) or
 * (tenant_id, created_at).
 */
export async function listLoans({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; filters: LoanFilters; limit: number; cursor?: string }) {
  const { filters } = input;
  const page = newestFirst(loans, input.cursor);
  const rows = await db
    .select()
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, input.tenantId),
        filters.mode ? eq(loans.mode, filters.mode) : undefined,
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
  return pageOf(rows, input.limit);
}
