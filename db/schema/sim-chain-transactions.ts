import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp, units } from "./columns.ts";
import { CHAINS, STABLECOINS } from "./vocabularies.ts";

/**
 * Transfers on the simulated (sandbox) chains. `reference` makes a send
 * idempotent: the same reference never moves money twice.
 */
export const simChainTransactions = sqliteTable("sim_chain_transactions", {
  id: text("id").primaryKey(),
  chain: text("chain", { enum: CHAINS }).notNull(),
  txHash: text("tx_hash").notNull().unique(),
  reference: text("reference").notNull().unique(),
  asset: text("asset", { enum: STABLECOINS }).notNull(),
  fromAddress: text("from_address").notNull(),
  toAddress: text("to_address").notNull(),
  amount: units("amount_units").notNull(),
  status: text("status", { enum: ["CONFIRMED", "FAILED"] }).notNull(),
  blockNumber: integer("block_number").notNull(),
  createdAt: timestamp("created_at").notNull(),
});
