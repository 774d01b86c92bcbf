import { sql } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";

/**
 * True (inside a batch) once the loan carries `token`: the condition on
 * which every row that belongs to a loan's state change is written.
 */
export const loanCarries = (loanId: string, token: string) =>
  sql`EXISTS (SELECT 1 FROM ${loans} WHERE ${loans.id} = ${loanId} AND ${loans.writeToken} = ${token})`;

export const newWriteToken = (): string => crypto.randomUUID();
