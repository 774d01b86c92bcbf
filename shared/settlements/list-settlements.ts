import { and, asc, eq, sql } from "drizzle-orm";
import { settlements } from "../../db/schema/loan-records.ts";
import { decodeCursor, pageOf } from "../../db/pagination.ts";
import type { TenantMode } from "../domain/rails.ts";
import { loadLoan } from "../loans/load-loan.ts";
import type { VerbDeps } from "../verbs.ts";

export type SettlementRow = typeof settlements.$inferSelect;

/**
 * A page of the money movements of one of the tenant's loans (SPEC.md
 * "Settlement history"), newest first as every list (DECISIONS.md "Lists"):
 * funding, then repayments as they settle. Another tenant's loan, a loan of
 * another mode than `mode` (a key's), or no such loan: 404. A loan has a
 * handful of rows, so they are read whole through the (tenant, loan,
 * createdAt) index and paged here: rows of one millisecond (a repayment and
 * its surplus, written together) keep the order they were written in, newest
 * last-written first. The cursor is the last row's position (db/pagination.ts).
 */
export async function listSettlements(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; loanId: string; mode?: TenantMode | null; limit: number; cursor?: string },
): Promise<{ loanId: string; data: SettlementRow[]; nextCursor: string | null }> {
  const loan = await loadLoan(db, input.tenantId, input.loanId, input.mode ?? null);
  const rows = (
    await db
      .select()
      .from(settlements)
      .where(and(eq(settlements.tenantId, loan.tenantId), eq(settlements.loanId, loan.id)))
      .orderBy(asc(settlements.createdAt), asc(sql`rowid`))
  ).reverse();
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  if (input.cursor && !after) throw new RangeError("invalid cursor");
  // After the cursor's row; a cursor of a row not in this history starts after its position in time.
  const from = after
    ? (() => {
        const at = rows.findIndex((r) => r.id === after.id);
        return at >= 0 ? at + 1 : rows.findIndex((r) => r.createdAt.getTime() < after.createdAt);
      })()
    : 0;
  const page = pageOf(from < 0 ? [] : rows.slice(from, from + input.limit + 1), input.limit);
  return { loanId: loan.id, ...page };
}
