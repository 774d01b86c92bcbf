-- A live loan is judged overdue or defaulted only as of the time up to which its chain's settlement listener has read
-- every payment (shared/sweeps/sweep-loans.ts): a payment not read yet may have been made on time, and loan.overdue and
-- loan.defaulted cannot be taken back. Live EVM: the block time of the cursor's block (confirmed blocks only, so a
-- payment waiting for its confirmations, an RPC outage and a listener catching up all keep it behind). TON: per tenant and
-- COLLECTIONS wallet, the start of the last poll that read up to the newest transaction, less toncenter's indexing lag.
-- Unix ms; null: nothing read yet (no live loan of the chain is swept).
ALTER TABLE chain_cursors ADD COLUMN read_through_at INTEGER;
CREATE TABLE ton_wallet_reads (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  address TEXT NOT NULL,
  read_through_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, address)
);
