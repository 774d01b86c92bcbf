import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Migration } from "./migrate.ts";

/** The migrations directory, shared with wrangler (`migrations_dir`). */
export const MIGRATIONS_DIR = join(import.meta.dir, "migrations");

/** Reads db/migrations/*.sql (outside workers: tests, scripts, the local stack). */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
}
