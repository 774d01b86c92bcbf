-- Settlement: what a loan has been paid, repayment rows with their block, payments the
-- listener could not match (never dropped), and each chain's listener cursor.

ALTER TABLE loans ADD COLUMN paid_units INTEGER NOT NULL DEFAULT 0;
ALTER TABLE loans ADD COLUMN surplus_units INTEGER NOT NULL DEFAULT 0;
ALTER TABLE settlements ADD COLUMN block_number INTEGER;
ALTER TABLE settlements ADD COLUMN log_index INTEGER;

CREATE TABLE unmatched_payments (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT REFERENCES tenants(id),
  chain TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  block_number INTEGER NOT NULL,
  from_address TEXT NOT NULL,
  to_address TEXT NOT NULL,
  token TEXT NOT NULL,
  amount_units INTEGER NOT NULL,
  comment TEXT,
  claimed_loan_id TEXT,
  reason TEXT NOT NULL,
  attributed_loan_id TEXT REFERENCES loans(id),
  attributed_at INTEGER,
  attributed_by TEXT,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX unmatched_payments_tx_idx ON unmatched_payments (chain, tx_hash, log_index);
CREATE INDEX unmatched_payments_tenant_idx ON unmatched_payments (tenant_id, created_at, id);

CREATE TABLE chain_cursors (
  chain TEXT PRIMARY KEY NOT NULL,
  last_block INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- One settlement row per (loan, kind, transaction, log): a transaction may carry several logs.
DROP INDEX settlements_loan_kind_tx_idx;
CREATE UNIQUE INDEX settlements_loan_kind_tx_idx ON settlements (loan_id, kind, tx_hash, log_index);
