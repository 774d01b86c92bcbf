import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/**
 * A verification link sent to a user's e-mail address. The token is single
 * use (`used_at`) and expires; only its SHA-256 is stored. No foreign key to
 * the user (migration 0033): a removed user's links stay until retention
 * takes them, so the links sent to an address are counted by address
 * whoever held it.
 */
export const emailVerifications = sqliteTable(
  "email_verifications",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    /** The address the link went to: following it verifies this address only. */
    email: text("email").notNull(),
    tokenHash: text("token_hash").notNull(),
    expiresAt: timestamp("expires_at").notNull(),
    usedAt: timestamp("used_at"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("email_verifications_token_idx").on(t.tokenHash),
    index("email_verifications_user_idx").on(t.userId, t.createdAt),
    index("email_verifications_email_idx").on(t.email, t.createdAt),
    index("email_verifications_expiry_idx").on(t.expiresAt),
  ],
);
