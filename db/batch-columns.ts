import { type Column, sql, type SQL } from "drizzle-orm";

/**
 * A column under a name of its own, for selects that run inside `db.batch()`:
 * D1 answers a batch's rows as objects keyed by column name, so two selected
 * columns of the same name (`id` of two joined tables) collapse into one and
 * drizzle maps the rest into the wrong fields (only the workerd tier sees it;
 * libSQL answers positionally). The value keeps the column's decoder.
 *
 * @example db.select({ id: apiKeys.id, tenantId: batchColumn(tenants.id, "tenant_id") })
 */
export const batchColumn = <C extends Column>(column: C, alias: string): SQL.Aliased<ValueOf<C>> => sql<ValueOf<C>>`${column}`.mapWith(column).as(alias);

type ValueOf<C extends Column> = C["_"]["notNull"] extends true ? C["_"]["data"] : C["_"]["data"] | null;

/** The results of a batch of queries, in their order (each query's awaited rows). */
export type BatchResults<T extends readonly unknown[]> = { -readonly [K in keyof T]: Awaited<T[K]> };
