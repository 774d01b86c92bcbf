import { text } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenants.ts";

/** The owning tenant of a row: every tenant-scoped table has one, and every query filters on it. */
export const tenantIdColumn = () =>
  text("tenant_id")
    .notNull()
    .references(() => tenants.id);
