import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/**
 * A link that frees an e-mail address held by an account that never proved
 * it (README "Freeing an e-mail address"). The token is single use and
 * expires; only its SHA-256 is stored. `userId` is the account that held the
 * address when the link was sent; no foreign key, as the row outlives it.
 */
export const emailReleases = sqliteTable(
  "email_releases",
  {
    id: text("id").primaryKey(),
    /** The address the link went to (lower-cased). */
    email: text("email").notNull(),
    userId: text("user_id").notNull(),
    tokenHash: text("token_hash").notNull(),
    expiresAt: timestamp("expires_at").notNull(),
    usedAt: timestamp("used_at"),
    /** When following the link removed the account; the address is then held for 24 hours for the link's holder (`heldAddress`). */
    freedAt: timestamp("freed_at"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("email_releases_token_idx").on(t.tokenHash),
    index("email_releases_email_idx").on(t.email, t.createdAt),
    index("email_releases_expiry_idx").on(t.expiresAt),
  ],
);
