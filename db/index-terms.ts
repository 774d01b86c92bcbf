import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/**
 * A column as a term of a condition: itself, or with a unary `+`, which
 * SQLite never reads through an index. D1 keeps no statistics, so SQLite
 * ties indexes that match as many equality terms and may take the wrong
 * one; writing the terms another index should serve with a `+` leaves the
 * right one alone (the plans are tested, shared/loans/history-plans.test.ts).
 */
export const term = (column: AnyColumn, plus: boolean): SQL => (plus ? sql`+${column}` : sql`${column}`);

/** `column = value` (nothing without a value), with `term`'s `+` when `plus`. */
export const equalsTerm = (column: AnyColumn, value: string | undefined, plus: boolean): SQL | undefined =>
  value === undefined ? undefined : sql`${term(column, plus)} = ${value}`;
