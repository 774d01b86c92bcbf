import { and, eq, gte, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { term } from "../../db/index-terms.ts";
import { mergedPageOf, newestFirst, pageOf } from "../../db/pagination.ts";
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
 * loan stays CREATED; the CREATED filter leaves declined loans out.
 */
function statusCondition(status: LoanListStatus, plus: boolean): SQL | undefined {
  const [statusTerm, decisionTerm] = [term(loans.status, plus), term(loans.decisionOutcome, plus)];
  if (status === "DECLINED") return sql`(${statusTerm} = 'CREATED' AND ${decisionTerm} = 'DECLINED')`;
  if (status === "CREATED") return sql`(${statusTerm} = 'CREATED' AND (${decisionTerm} IS NULL OR ${decisionTerm} <> 'DECLINED'))`;
  return sql`${statusTerm} = ${status}`;
}

/** A loan with no decision yet, in review or declined is CREATED (only an approved loan moves on). */
const STILL_CREATED: readonly string[] = ["MANUAL_REVIEW", "DECLINED"];

type ListLoansInput = {
  tenantId: string;
  filters: LoanFilters;
  limit: number;
  cursor?: string;
  /** Only loans with no decision yet (one part of a CREATED list, `listLoans`). */
  undecided?: boolean;
};

/** Whether a list reads a borrower's own rows (its ref's or wallet's), of both modes at once. */
const byBorrower = (filters: LoanFilters) => filters.borrowerRef !== undefined || filters.borrowerWalletAddress !== undefined;

/**
 * The tenant's loans of one mode (or, with a borrower filter, of `mode` or
 * both), newest first, with DECISIONS.md's filters (one more row than the
 * page, to know if there is a next). Each filter reads its own range
 * (migration 0024), never the tenant's whole history, whatever its length;
 * a term another index should serve is written with a `+` (db/index-terms.ts):
 * - a borrower's ref or wallet: (tenant_id, borrower_ref |
 *   borrower_wallet_address, created_at), every other term `+`;
 * - loans still CREATED of one decision (or none yet): the DECLINED status,
 *   the MANUAL_REVIEW and DECLINED decisions (the review queue), CREATED
 *   with a decision (`listLoans` splits a CREATED list so): (tenant_id,
 *   status = CREATED, decision_outcome, created_at), with `+mode`;
 * - another status: (tenant_id, mode, status, created_at);
 * - otherwise (tenant_id, mode, created_at).
 * The plans are tested (history-plans.test.ts).
 */
export function loansPageQuery(db: Db, input: ListLoansInput) {
  const { filters } = input;
  const page = newestFirst(loans, input.cursor);
  const borrower = byBorrower(filters);
  const stillCreated =
    filters.status === "DECLINED" ||
    input.undecided === true ||
    (filters.decision !== undefined && (filters.status === "CREATED" || STILL_CREATED.includes(filters.decision)));
  const modeTerm = term(loans.mode, borrower || stillCreated);
  return db
    .select()
    .from(loans)
    .where(
      and(
        eq(loans.tenantId, input.tenantId),
        filters.mode === undefined ? undefined : sql`${modeTerm} = ${filters.mode}`,
        filters.status ? statusCondition(filters.status, borrower) : stillCreated ? sql`${term(loans.status, borrower)} = 'CREATED'` : undefined,
        filters.borrowerRef ? eq(loans.borrowerRef, filters.borrowerRef) : undefined,
        filters.decision ? sql`${term(loans.decisionOutcome, borrower)} = ${filters.decision}` : undefined,
        input.undecided ? sql`${term(loans.decisionOutcome, borrower)} IS NULL` : undefined,
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

/**
 * The tenant's loans, newest first, with DECISIONS.md's filters: a page, and
 * the cursor of the next. Parts read apart, each through its own range, in
 * one batch, and merged:
 * - CREATED (without a decision filter or a borrower's): its rows are every
 *   decision but DECLINED, so the undecided, the APPROVED (not yet funded)
 *   and the MANUAL_REVIEW ones, each an exact range, never a walk past the
 *   declined loans (of one mode or both);
 * - both modes (a dashboard session without `mode`), unless a borrower
 *   filter reads the borrower's rows of both at once: each mode's page.
 */
export async function listLoans({ db }: Pick<VerbDeps, "db">, input: ListLoansInput) {
  const { filters } = input;
  if (filters.status === "CREATED" && filters.decision === undefined && !byBorrower(filters)) {
    const ofDecision = (decision: "APPROVED" | "MANUAL_REVIEW") => loansPageQuery(db, { ...input, filters: { ...filters, decision } });
    return mergedPageOf(await db.batch([loansPageQuery(db, { ...input, undecided: true }), ofDecision("APPROVED"), ofDecision("MANUAL_REVIEW")]), input.limit);
  }
  if (filters.mode !== undefined || byBorrower(filters)) return pageOf(await loansPageQuery(db, input), input.limit);
  const ofMode = (mode: TenantMode) => loansPageQuery(db, { ...input, filters: { ...filters, mode } });
  return mergedPageOf(await db.batch([ofMode("sandbox"), ofMode("live")]), input.limit);
}
