-- A live payment the settlement listener read but could not apply (its loan's writer failed), held here and tried
-- again with a back-off, so the cursor moves on for every other payment. Before, a cursor only moved past applied
-- payments: on POLYGON and BASE one payment that could not be applied (an audit's reorg broke a CHECK that way)
-- stopped the chain's listener for every tenant, and on TON it stopped the tenant's COLLECTIONS wallet. On EVM a
-- reorg orphaning its block drops it, as it drops unmatched payments. tenant_id: the tenant whose COLLECTIONS wallet
-- it paid (TON, where each tenant's wallets are read on their own; null on EVM, whose chain is read as a whole).
CREATE TABLE held_payments (
  chain TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  tenant_id TEXT REFERENCES tenants(id),
  block_number INTEGER NOT NULL,
  observation TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chain, tx_hash, log_index, kind)
);
CREATE INDEX held_payments_due_idx ON held_payments (chain, next_attempt_at);
CREATE INDEX held_payments_block_idx ON held_payments (chain, block_number);
