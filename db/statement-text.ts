import type { BatchItem } from "drizzle-orm/batch";

type Query = { sql: string; params: unknown[] };

/**
 * For tests of prepared statements (db/prepared-statements.ts): the SQL and
 * binds a batch item sends (`preparedQuery`), and those drizzle builds for
 * its own query (`builtQuery`), so the two can be compared.
 */
export const preparedQuery = (item: BatchItem<"sqlite">): Query => (item as unknown as { _prepare(): { getQuery(): Query } })._prepare().getQuery();
export const builtQuery = (item: BatchItem<"sqlite">): Query => (item as unknown as { toSQL(): Query }).toSQL();
