-- Live EVM: a payment the settlement listener read but could not apply (its loan's writer failed), held here and
-- tried again with a back-off, so the chain's cursor moves on for every other payment. Before, the cursor only moved
-- past applied payments: one payment that could not be applied (an audit's reorg broke a CHECK that way) stopped
-- the chain's listener for every tenant. A reorg orphaning its block drops it, as it drops unmatched payments.
CREATE TABLE held_payments (
  chain TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
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
