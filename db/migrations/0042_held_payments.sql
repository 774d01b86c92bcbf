-- A live payment the settlement listener read but could not apply (its loan's writer failed), held here and tried
-- again with a back-off, so the cursor moves on for every other payment. Before, a cursor only moved past applied
-- payments: on POLYGON and BASE one payment that could not be applied (an audit's reorg broke a CHECK that way)
-- stopped the chain's listener for every tenant, and on TON it stopped the tenant's COLLECTIONS wallet. On EVM a
-- reorg orphaning its block drops it, as it drops unmatched payments, and block_hash (the hash its block had when it
-- was read) is remembered again before each retry, so a reorg racing the retry is still seen. tenant_id: the tenant
-- whose COLLECTIONS wallet it paid on TON, where each (tenant, wallet) is read on its own and one transaction can be
-- held once per tenant; '' on EVM, whose chain is read as a whole.
CREATE TABLE held_payments (
  chain TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  tenant_id TEXT NOT NULL DEFAULT '',
  block_number INTEGER NOT NULL,
  block_hash TEXT,
  observation TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chain, tx_hash, log_index, kind, tenant_id)
);
CREATE INDEX held_payments_due_idx ON held_payments (chain, tenant_id, next_attempt_at);
CREATE INDEX held_payments_block_idx ON held_payments (chain, block_number);
