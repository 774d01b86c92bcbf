-- The live EVM settlement listener (issue 13): reorg handling and RPC back-off.
-- chain_blocks remembers the hash of each live block the listener credited from (credited = 1)
-- and of its cursor block (credited = 0); a hash that changed means the block was orphaned.
CREATE TABLE chain_blocks (
  chain TEXT NOT NULL,
  block_number INTEGER NOT NULL,
  block_hash TEXT NOT NULL,
  credited INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (chain, block_number)
);
-- Consecutive failed polls and when the next may run: RPC errors and rate limits back off, the cursor stays.
ALTER TABLE chain_cursors ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chain_cursors ADD COLUMN backoff_until INTEGER;
-- A repayment un-credited by a reorg is kept as REVERSED; the same transaction and log credited
-- again (re-mined in another block) is a new row, so uniqueness holds among the other rows only.
DROP INDEX settlements_loan_kind_tx_idx;
CREATE UNIQUE INDEX settlements_loan_kind_tx_idx ON settlements (loan_id, kind, tx_hash, log_index) WHERE status <> 'REVERSED';
CREATE INDEX settlements_chain_block_idx ON settlements (chain, block_number);
CREATE INDEX unmatched_payments_chain_block_idx ON unmatched_payments (chain, block_number);
