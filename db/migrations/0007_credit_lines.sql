-- Widget credit lines: durable per (program, wallet); once KYC is confirmed and the revolving
-- agreement accepted, later draws skip both.
CREATE TABLE credit_lines (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  program_id TEXT NOT NULL REFERENCES widget_programs(id),
  wallet_address TEXT NOT NULL,
  chain TEXT NOT NULL,
  borrower_ref TEXT NOT NULL,
  kyc_confirmed_at INTEGER,
  kyc_merchant_user_id TEXT,
  kyc_reference TEXT,
  agreement_accepted_at INTEGER,
  agreement_challenge_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX credit_lines_program_wallet_idx ON credit_lines (program_id, wallet_address);
CREATE INDEX credit_lines_tenant_idx ON credit_lines (tenant_id, created_at);
