-- Attribution of an unmatched payment claims it with a fresh token in the same batch as the
-- loan's credit, and the credit holds only if that claim was made: one payment, one loan.
ALTER TABLE unmatched_payments ADD COLUMN attribution_claim TEXT;

-- Sandbox chains are simulated once per tenant (DECISIONS.md "Modes"). Each tenant's ledger of a
-- chain has its own listener cursor, and is due for a poll from `poll_after` (a sandbox helper's
-- write makes it due at once; a poll puts it an hour out), read by the cron job through an index.
CREATE TABLE sandbox_ledgers (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  chain TEXT NOT NULL,
  last_block INTEGER NOT NULL,
  poll_after INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, chain)
);
CREATE INDEX sandbox_ledgers_poll_idx ON sandbox_ledgers (poll_after);

-- The simulated chains' shared cursors are gone with their shared ledgers.
DELETE FROM chain_cursors WHERE chain IN ('POLYGON_AMOY', 'BASE_SEPOLIA', 'TON_TESTNET', 'SOLANA_DEVNET');

-- Unmatched payments are unique per tenant too: one signed transaction replayed on two tenants'
-- sandbox ledgers has one hash and is two payments, neither of which may hide the other.
DROP INDEX unmatched_payments_tx_idx;
CREATE UNIQUE INDEX unmatched_payments_tx_idx ON unmatched_payments (chain, tx_hash, log_index, coalesce(tenant_id, ''));
