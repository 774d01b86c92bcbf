import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";

/** A loan of the tenant; another tenant's id, or no such loan: 404. */
export async function loadLoan(db: Db, tenantId: string, loanId: string): Promise<LoanRow> {
  if (!isUuid(loanId)) throw notFound("Loan");
  const [loan] = await db
    .select()
    .from(loans)
    .where(and(eq(loans.id, loanId), eq(loans.tenantId, tenantId)))
    .limit(1);
  if (!loan) throw notFound("Loan");
  return loan;
}
