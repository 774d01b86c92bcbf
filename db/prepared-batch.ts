import { fillPlaceholders, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { BatchResults } from "./batch-columns.ts";
import type { Db } from "./create-db.ts";

/**
 * What drizzle's `db.batch()` asks of each item (d1/session.js and
 * libsql/session.js): `_prepare()` gives the built query, its statement and
 * the mapping of its rows. Not in drizzle's public types.
 */
type PreparedQuery = {
  getQuery(): { sql: string; params: unknown[] };
  stmt?: unknown;
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
  all(placeholderValues?: Record<string, unknown>): Promise<unknown>;
};
type Preparable = { _prepare(): PreparedQuery };

/**
 * Queries whose SQL is built once per database and reused with new values.
 *
 * Building a query's SQL is most of the CPU a hot read costs in drizzle
 * (chunk by chunk, with a prototype walk per type check): GET /v1/me spent
 * about a third of its CPU there. A prepared read is written with
 * `sql.placeholder(name)` wherever a value goes; it is built the first time
 * a database runs it, and after that only the placeholders are filled.
 * Each query's SQL and row mapping are drizzle's own.
 *
 * `build` must give the same SQL every time (only placeholders vary), and is
 * called once per database: it is the query's shape, not a query.
 *
 * @example
 * const keyLookup = preparedReads((db) => [db.select().from(apiKeys).where(eq(apiKeys.keyHash, sql.placeholder("hash")))] as const);
 * const [[row]] = await keyLookup(db, { hash });
 */
export function preparedReads<T extends readonly BatchItem<"sqlite">[]>(
  build: (db: Db) => T,
): (db: Db, values: Record<string, unknown>) => Promise<BatchResults<T>> {
  const built = new WeakMap<Db, PreparedQuery[]>();
  return async (db, values) => {
    let prepared = built.get(db);
    if (!prepared) {
      prepared = (build(db) as unknown as Preparable[]).map((q) => q._prepare());
      built.set(db, prepared);
    }
    if (prepared.length === 1) {
      // One statement alone, not a batch (libSQL would make a batch a transaction).
      const rows = await prepared[0]!.all(values);
      return [rows] as unknown as BatchResults<T>;
    }
    const items = prepared.map((p) => {
      const { sql, params } = p.getQuery();
      const filled: PreparedQuery = {
        getQuery: () => ({ sql, params: fillPlaceholders(params, values) }),
        stmt: p.stmt,
        mapResult: (response, isFromBatch) => p.mapResult(response, isFromBatch),
        all: (v) => p.all(v),
      };
      return { _prepare: () => filled } satisfies Preparable;
    });
    return (await db.batch(items as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as unknown as BatchResults<T>;
  };
}

/**
 * A placeholder where a query builder takes a value of type `T`: for query
 * shapes shared with one-off queries (`poolQuery(db, { tenantId, mode })`)
 * that only interpolate the value (never branch on it).
 */
export const placeholderAs = <T>(name: string): T => sql.placeholder(name) as unknown as T;
