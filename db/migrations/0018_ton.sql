-- Live TON (issue 13 item 5). ton_transfers: each funding jetton transfer the TON adapter
-- signed, one row per reference (funding:<loanId>), written BEFORE the message is broadcast so
-- a repeat call never signs a second transfer for the same reference: it follows this one (by
-- its wallet, seqno and query id) to success or failure. status SENT while in flight; the
-- partial unique index keeps one message in flight per sending wallet (a v5r1 wallet accepts
-- only the next seqno, so a second message would race the first).
CREATE TABLE ton_transfers (
  reference TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  wallet TEXT NOT NULL,
  jetton_wallet TEXT NOT NULL,
  to_address TEXT NOT NULL,
  amount_units INTEGER NOT NULL,
  query_id TEXT NOT NULL,
  seqno INTEGER NOT NULL,
  valid_until INTEGER NOT NULL,
  message_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  tx_hash TEXT,
  tx_lt TEXT,
  error_reason TEXT,
  confirmed_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX ton_transfers_in_flight_idx ON ton_transfers (wallet) WHERE status = 'SENT';

-- The TON settlement listener's cursor per tenant and COLLECTIONS wallet: the (lt, hash) of
-- the last transaction of that wallet it has applied. lt is a decimal string (64-bit).
CREATE TABLE ton_wallet_cursors (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  address TEXT NOT NULL,
  last_lt TEXT NOT NULL,
  last_hash TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, address)
);
