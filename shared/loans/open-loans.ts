import { and, eq, inArray, isNull, ne, or, sql } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";

/**
 * SQL: the loan is open, i.e. still owed or still to be funded: CREATED and
 * not declined, ACTIVE, or DEFAULTED (the `isOpen` of the transition table).
 * Counted against `maxOpenLoansPerBorrower` and a credit line's limit.
 */
export const loanIsOpen = () =>
  or(
    inArray(loans.status, ["ACTIVE", "DEFAULTED"]),
    and(eq(loans.status, "CREATED"), or(isNull(loans.decisionOutcome), ne(loans.decisionOutcome, "DECLINED"))),
  );

/**
 * SQL: the open principal (base units) of one credit line, i.e. of a
 * program's loans to one wallet. The line's `available` is its limit less
 * this; the guarded insert of a draw compares against it.
 */
export const openPrincipalOfLine = (line: { tenantId: string; programId: string; walletAddress: string }) =>
  sql<number>`(SELECT COALESCE(SUM(${loans.principal}), 0) FROM ${loans} WHERE ${and(
    eq(loans.tenantId, line.tenantId),
    eq(loans.programId, line.programId),
    eq(loans.borrowerWalletAddress, line.walletAddress),
    loanIsOpen(),
  )})`;
