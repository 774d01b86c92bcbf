import { sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { CHAINS, STABLECOINS, TENANT_MODES } from "../../shared/domain/vocabularies.ts";
import { timestamp, units } from "./columns.ts";
import { tenants } from "./tenants.ts";

/**
 * A liquidity pool principal is drawn from. `tenantId` is null for a shared
 * pool that several tenants may be configured to draw from.
 * Headroom = available - reserved.
 */
export const liquidityPools = sqliteTable(
  "liquidity_pools",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").references(() => tenants.id),
    mode: text("mode", { enum: TENANT_MODES }).notNull(),
    stablecoin: text("stablecoin", { enum: STABLECOINS }).notNull(),
    /**
     * Live pools only: the chain whose DISBURSEMENT wallet this pool mirrors
     * (one per tenant and chain; `available` is refreshed from the wallet's
     * on-chain balance before each reservation). Null for sandbox and shared pools.
     */
    chain: text("chain", { enum: CHAINS }),
    available: units("available_units").notNull(),
    reserved: units("reserved_units").notNull().default(0n),
    /** `liquidity.low` fires once when headroom falls under this. */
    lowThreshold: units("low_threshold_units").notNull(),
    /**
     * The `liquidity.low` event that fired for the current dip; cleared when
     * headroom is back at or above the threshold, which re-arms the alert.
     */
    lowAlertEventId: text("low_alert_event_id"),
    createdAt: timestamp("created_at").notNull(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    index("liquidity_pools_tenant_idx").on(t.tenantId),
    uniqueIndex("liquidity_pools_live_chain_idx").on(t.tenantId, t.chain).where(sql`chain IS NOT NULL`),
  ],
);
