import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { CHAINS, WALLET_ROLES } from "../../shared/domain/vocabularies.ts";
import { timestamp } from "./columns.ts";
import { tenantIdColumn } from "./tenant-ref.ts";

/**
 * A tenant's wallet on a live chain, one row per (chain, role, address): one
 * address may hold several roles, each its own row (DECISIONS.md "Live wallets").
 */
export const wallets = sqliteTable(
  "wallets",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    chain: text("chain", { enum: CHAINS }).notNull(),
    role: text("role", { enum: WALLET_ROLES }).notNull(),
    /** Canonical for its chain (shared/domain/addresses.ts). */
    address: text("address").notNull(),
    /** When a signed challenge proved control of the address; null: not verified. */
    verifiedAt: timestamp("verified_at"),
    /** GAS only: native base units (wei, nanoton) as a decimal string (18 decimals do not fit a JS number). */
    gasThreshold: text("gas_threshold"),
    /** The `wallet.gas_low` of the current dip; cleared when the balance is back at or above the threshold. */
    gasLowEventId: text("gas_low_event_id"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
    deletedAt: timestamp("deleted_at"),
  },
  (t) => [
    uniqueIndex("wallets_unique_role_idx").on(t.tenantId, t.chain, t.role, t.address).where(sql`deleted_at IS NULL`),
    index("wallets_tenant_idx").on(t.tenantId, t.createdAt),
    index("wallets_gas_idx").on(t.role, t.deletedAt),
  ],
);

export type WalletRow = typeof wallets.$inferSelect;

/** Single-use proof-of-control challenges, valid 5 minutes. */
export const walletChallenges = sqliteTable(
  "wallet_challenges",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    walletId: text("wallet_id")
      .notNull()
      .references(() => wallets.id),
    /** The exact text to sign: the signature is checked against this, never the client's echo. */
    message: text("message").notNull(),
    expiresAt: timestamp("expires_at").notNull(),
    usedAt: timestamp("used_at"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("wallet_challenges_wallet_idx").on(t.walletId, t.expiresAt), index("wallet_challenges_expiry_idx").on(t.expiresAt)],
);

/** Signing keys installed by the platform operator, sealed under SECRETS_KEY; one per (tenant, chain, address). */
export const signers = sqliteTable(
  "signers",
  {
    id: text("id").primaryKey(),
    tenantId: tenantIdColumn(),
    chain: text("chain", { enum: CHAINS }).notNull(),
    address: text("address").notNull(),
    /** `sealSecret` output (AES-256-GCM); the key in the clear is never stored. */
    sealedKey: text("sealed_key").notNull(),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [uniqueIndex("signers_address_idx").on(t.tenantId, t.chain, t.address)],
);
