import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { tenantIdColumn } from "./tenant-ref.ts";
import { timestamp } from "./columns.ts";
import { ROLES, type Role } from "../../shared/domain/vocabularies.ts";

export { ROLES, type Role };

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    /** Lower-cased; unique across tenants because login is by e-mail alone. */
    email: text("email").notNull().unique(),
    role: text("role", { enum: ROLES }).notNull(),
    /** PBKDF2-SHA256 hash and its per-user salt, both base64. */
    passwordHash: text("password_hash").notNull(),
    passwordSalt: text("password_salt").notNull(),
    passwordIterations: integer("password_iterations").notNull(),
    createdAt: timestamp("created_at").notNull(),
    /** When the user proved the address is theirs (a verification link); null: no notification e-mail goes to it. */
    emailVerifiedAt: timestamp("email_verified_at"),
    /** The version a session token must carry (`sv`): logging out and a password change move it on, ending earlier sessions. */
    sessionVersion: integer("session_version").notNull().default(0),
  },
  (t) => [index("users_tenant_idx").on(t.tenantId)],
);
