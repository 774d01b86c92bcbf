import { getTableColumns, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * Many rows in one statement, as one JSON parameter read with `json_each`:
 * an insert of 50 rows is one statement instead of one per few rows (D1
 * binds at most 100 parameters per statement, so a multi-row VALUES of a
 * 15-column table holds 6 rows), and its SQL is the same whatever the number
 * of rows, so it is built once (db/prepared-statements.ts).
 *
 *     db.insert(table).select(selectJsonRows(table, p("rows"))).onConflictDoNothing()
 *
 * filled with `jsonRows(table, rows)`.
 */

/**
 * The SELECT of an insert-from-select that reads `table`'s rows from the
 * JSON array `rows`: every column of the table, in order (as drizzle lists
 * them for an insert-from-select). `WHERE true`: SQLite's rule for an upsert
 * after a SELECT with a FROM.
 */
export function selectJsonRows(table: SQLiteTable, rows: SQL | Placeholder): SQL {
  const fields = Object.keys(getTableColumns(table)).map(jsonField);
  return sql`SELECT ${sql.join(fields, sql`, `)} FROM json_each(${rows}) AS j WHERE true`;
}

/** The value under `key` of the row `json_each(…) AS j` is reading: for statements that read rows of their own shape. */
export const jsonField = (key: string): SQL => sql.raw(`json_extract(j.value, '$.${checkedKey(key)}')`);

/**
 * `rows` as the JSON array `selectJsonRows` reads: each value through its
 * column's encoder, as an insert binds it (timestamps as epoch
 * milliseconds, booleans as 0/1, JSON columns as their text); a value not
 * given takes the column's default (`$defaultFn`'s, or its SQL-side one as a
 * value), else NULL.
 */
export function jsonRows<T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]): string {
  const columns = Object.entries(getTableColumns(table));
  return JSON.stringify(
    rows.map((row) => {
      const given = row as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [key, column] of columns) {
        const value = given[key] !== undefined ? given[key] : column.defaultFn ? column.defaultFn() : column.default;
        const driver = value === undefined || value === null ? null : column.mapToDriverValue(value);
        // JSON numbers are doubles: a bigint (money) would lose its precision on the way.
        if (typeof driver === "bigint") throw new Error(`json-rows: ${key} is a bigint; bind it as a parameter of its own`);
        out[key] = driver;
      }
      return out;
    }),
  );
}

/** A column key goes into a JSON path as it is: only plain identifiers do. */
function checkedKey(key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`json-rows: column key ${key} is not a plain identifier`);
  return key;
}
