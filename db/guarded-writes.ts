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
 */
export function insertIf<T extends SQLiteTable>(
  db: Db,
  table: T,
  values: { [K in keyof T["$inferInsert"]]: T["$inferInsert"][K] | SQL },
  condition: SQL,
) {
  const columns = getTableColumns(table);
  const entries = Object.entries(values as Record<string, unknown>).filter(
    ([key, value]) => value !== undefined && key in columns,
  );
  const names = sql.join(entries.map(([key]) => sql.identifier(columns[key]!.name)), sql`, `);
  const params = sql.join(
    entries.map(([key, value]) => (is(value, SQL) ? value : sql.param(value, columns[key]!))),
    sql`, `,
  );
  return db.run(sql`INSERT INTO ${table} (${names}) SELECT ${params} WHERE ${condition}`);
}
