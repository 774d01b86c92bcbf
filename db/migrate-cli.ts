/**
 * `npm run migrate -- <libsql-url>`: applies db/migrations to a libSQL
 * database (a file such as `file:.data/svc.db`, or a libSQL server). Deployed
 * D1 databases take the same files with `wrangler d1 migrations apply`, which
 * keeps the same `d1_migrations` bookkeeping table.
 */
import { createClient } from "@libsql/client";
import { readMigrations } from "./migration-files.ts";
import { migrateLibsql } from "./migrate.ts";

const url = process.argv[2];
if (!url) {
  console.error("usage: npm run migrate -- <libsql-url>   (for example file:.data/svc.db)");
  process.exit(2);
}
const client = createClient({ url, authToken: process.env.LIBSQL_AUTH_TOKEN });
const applied = await migrateLibsql(client, readMigrations());
console.log(applied.length ? `applied: ${applied.join(", ")}` : "up to date");
client.close();
