import { and, asc, eq, sql } from "drizzle-orm";
import { settlements } from "../../db/schema/loan-records.ts";
import type { TenantMode } from "../domain/rails.ts";
import { loadLoan } from "../loans/load-loan.ts";
import type { VerbDeps } from "../verbs.ts";

export type SettlementRow = typeof settlements.$inferSelect;

/**
 * Every money movement of one of the tenant's loans, oldest first (SPEC.md
 * "Settlement history"): funding now, repayments as they settle. Another
 * tenant's loan, a loan of another mode than `mode` (a key's), or no such loan: 404. Read through the (tenant, loan,
 * createdAt) index; rows of one millisecond keep their insertion order.
 */
export async function listSettlements(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; loanId: string; mode?: TenantMode | null },
): Promise<{ loanId: string; rows: SettlementRow[] }> {
  const loan = await loadLoan(db, input.tenantId, input.loanId, input.mode ?? null);
  const rows = await db
    .select()
    .from(settlements)
    .where(and(eq(settlements.tenantId, loan.tenantId), eq(settlements.loanId, loan.id)))
    .orderBy(asc(settlements.createdAt), asc(sql`rowid`));
  return { loanId: loan.id, rows };
}
