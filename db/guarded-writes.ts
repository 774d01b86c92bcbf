import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./create-db.ts";

/**
 * `INSERT INTO table (…) SELECT … WHERE condition`: an insert that happens
 * only if `condition` holds when the statement runs. In a batch after a
 * conditional update, it makes the insert depend on that update (see
 * `loans.writeToken`). Values go through the columns' own encoders, so
 * bigint units, JSON and timestamps are stored as a plain insert would; a
 * value that is itself SQL (a subquery) is embedded as is.
 *
 * Built with drizzle's insert-from-select rather than `db.run(sql)`: drizzle's
 * D1 batch cannot bind the parameters of a raw statement.
 */
export function insertIf<T extends SQLiteTable>(db: Db, table: T, values: { [K in keyof T["$inferInsert"]]: T["$inferInsert"][K] | SQL }, condition: SQL) {
  const given = values as Record<string, unknown>;
  // drizzle lists every column of the table, in order, for an insert-from-select.
  const selected = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const value = given[key] !== undefined ? given[key] : column.default;
    if (value === undefined || value === null) return sql`NULL`;
    return is(value, SQL) ? value : sql.param(value, column);
  });
  return db.insert(table).select(sql`SELECT ${sql.join(selected, sql`, `)} WHERE ${condition}`);
}
