-- Live wallets (DECISIONS.md "Live wallets"): a tenant's addresses on live chains, one row
-- per (chain, role, address), so one address may hold several roles. Deleted wallets keep
-- their row (deleted_at) and leave the unique index, so a wallet can be added again.
-- gas_threshold holds native base units (wei, nanoton) as a decimal string: 18-decimal
-- amounts do not fit a JS number exactly. gas_low_event_id is the `wallet.gas_low` of the
-- current dip; cleared when the balance is back at or above the threshold.
CREATE TABLE wallets (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  chain TEXT NOT NULL,
  role TEXT NOT NULL,
  address TEXT NOT NULL,
  verified_at INTEGER,
  gas_threshold TEXT,
  gas_low_event_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE UNIQUE INDEX wallets_unique_role_idx ON wallets (tenant_id, chain, role, address) WHERE deleted_at IS NULL;
CREATE INDEX wallets_tenant_idx ON wallets (tenant_id, created_at);
CREATE INDEX wallets_gas_idx ON wallets (role, deleted_at);

-- Proof-of-control challenges: single use (used_at), valid 5 minutes. The message is kept
-- so the signature is checked against the server's text, never the client's echo.
CREATE TABLE wallet_challenges (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  wallet_id TEXT NOT NULL REFERENCES wallets(id),
  message TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX wallet_challenges_wallet_idx ON wallet_challenges (wallet_id, expires_at);

-- Signing keys the platform operator installs for a tenant's live wallet: sealed with
-- AES-256-GCM under SECRETS_KEY, never stored, returned or logged in the clear. One key per
-- (tenant, chain, address); installing again replaces the sealed key.
CREATE TABLE signers (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  chain TEXT NOT NULL,
  address TEXT NOT NULL,
  sealed_key TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX signers_address_idx ON signers (tenant_id, chain, address);
