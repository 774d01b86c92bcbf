import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";

/**
 * A loan of the tenant; another tenant's id, or no such loan: 404. With a
 * `mode` (an API key's, DECISIONS.md "Modes"), a loan of the other mode is
 * not found either: a sandbox key never reads or moves a live loan.
 */
export async function loadLoan(db: Db, tenantId: string, loanId: string, mode: TenantMode | null = null): Promise<LoanRow> {
  if (!isUuid(loanId)) throw notFound("Loan");
  const [loan] = await db
    .select()
    .from(loans)
    .where(and(eq(loans.id, loanId), eq(loans.tenantId, tenantId), mode ? eq(loans.mode, mode) : undefined))
    .limit(1);
  if (!loan) throw notFound("Loan");
  return loan;
}
