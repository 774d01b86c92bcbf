import { type Client, createClient } from "@libsql/client";
import { createDb, type Db } from "./create-db.ts";
import { readMigrations } from "./migration-files.ts";
import { migrateLibsql } from "./migrate.ts";

/**
 * A fresh, migrated libSQL database in memory, for the verb and app tests.
 */
export async function createTestDb(): Promise<{ db: Db; client: Client; close(): void }> {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  return { db: createDb(client), client, close: () => client.close() };
}
