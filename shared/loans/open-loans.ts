import { and, eq, inArray, isNull, ne, or } from "drizzle-orm";
import { loans } from "../../db/schema/loans.ts";

/**
 * SQL: the loan is open, i.e. still owed or still to be funded: CREATED and
 * not declined, ACTIVE, or DEFAULTED (the `isOpen` of the transition table).
 * Counted against `maxOpenLoansPerBorrower` and a credit line's limit.
 */
export const loanIsOpen = () =>
  or(inArray(loans.status, ["ACTIVE", "DEFAULTED"]), and(eq(loans.status, "CREATED"), or(isNull(loans.decisionOutcome), ne(loans.decisionOutcome, "DECLINED"))));
