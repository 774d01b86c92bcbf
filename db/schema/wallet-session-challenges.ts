import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { tenantIdColumn } from "./tenant-ref.ts";

/**
 * Wallet-session challenges a verified signature has used. The challenges
 * themselves are stateless (HMAC'ed, shared/embed/wallet-session.ts); this
 * row makes each one single use. Rows past `expiresAt` are pruned.
 */
export const walletSessionChallenges = sqliteTable(
  "wallet_session_challenges",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    expiresAt: timestamp("expires_at").notNull(),
    usedAt: timestamp("used_at").notNull(),
  },
  (t) => [index("wallet_session_challenges_tenant_expiry_idx").on(t.tenantId, t.expiresAt)],
);
