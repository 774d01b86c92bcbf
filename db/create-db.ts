import type { Client as LibsqlClient } from "@libsql/client";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { drizzle as drizzleD1 } from "drizzle-orm/d1";
// driver-core builds the libSQL database around a client we pass in, without
// importing @libsql/client at run time, so workers can bundle this file.
// @ts-expect-error its .d.ts omits `construct`, which the module does export
import { construct as drizzleLibsql } from "drizzle-orm/libsql/driver-core";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { schema, type Schema } from "./schema.ts";

/**
 * The database as the verbs see it: drizzle over SQLite (D1 or libSQL), with
 * `batch` for atomic multi-statement writes. D1 has no interactive
 * transactions, so nothing here offers `transaction()`.
 */
export type Db = Omit<BaseSQLiteDatabase<"async", unknown, Schema>, "transaction"> & {
  batch<U extends BatchItem<"sqlite">, T extends Readonly<[U, ...U[]]>>(batch: T): Promise<BatchResponse<T>>;
};

const isLibsql = (source: D1Database | LibsqlClient): source is LibsqlClient => typeof (source as LibsqlClient).execute === "function";

/**
 * @example createDb(env.DB)                          // in a worker
 * @example createDb(createClient({ url: "file:x.db" })) // tests, scripts
 */
export function createDb(source: D1Database | LibsqlClient): Db {
  if (isLibsql(source)) return drizzleLibsql(source, { schema }) as Db;
  return drizzleD1(source, { schema }) as unknown as Db;
}
