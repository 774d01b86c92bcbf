-- Loans: borrowers and their KYC audit, underwriting policies, loans, loan-level KYC
-- confirmations and agreements, the events outbox, settlements, and the simulated chain's
-- transactions. Immutable tables refuse UPDATE and DELETE with triggers (one line each,
-- so the statement splitter keeps them whole).

CREATE TABLE borrowers (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  borrower_ref TEXT NOT NULL,
  kyc_status TEXT NOT NULL DEFAULT 'PENDING' CHECK (kyc_status IN ('PENDING', 'VERIFIED', 'FAILED')),
  verified_at INTEGER,
  merchant_user_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX borrowers_tenant_ref_idx ON borrowers (tenant_id, borrower_ref);

CREATE TABLE borrower_kyc_audit (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  borrower_id TEXT NOT NULL REFERENCES borrowers(id),
  from_status TEXT NOT NULL,
  to_status TEXT NOT NULL,
  merchant_user_id TEXT,
  actor TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX borrower_kyc_audit_borrower_idx ON borrower_kyc_audit (borrower_id, created_at);
CREATE TRIGGER borrower_kyc_audit_no_update BEFORE UPDATE ON borrower_kyc_audit BEGIN SELECT RAISE(ABORT, 'borrower_kyc_audit is immutable'); END;
CREATE TRIGGER borrower_kyc_audit_no_delete BEFORE DELETE ON borrower_kyc_audit BEGIN SELECT RAISE(ABORT, 'borrower_kyc_audit is immutable'); END;

CREATE TABLE policies (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  version INTEGER NOT NULL CHECK (version >= 1),
  require_kyc_verified INTEGER NOT NULL,
  manual_review_above_units INTEGER,
  max_open_loans_per_borrower INTEGER,
  blocked_wallets TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX policies_tenant_version_idx ON policies (tenant_id, version);

CREATE TABLE loans (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  idempotency_key TEXT NOT NULL,
  loan_product_id TEXT NOT NULL REFERENCES loan_products(id),
  borrower_id TEXT NOT NULL REFERENCES borrowers(id),
  borrower_ref TEXT NOT NULL,
  borrower_wallet_address TEXT NOT NULL,
  chain TEXT NOT NULL,
  stablecoin TEXT NOT NULL,
  principal_units INTEGER NOT NULL CHECK (principal_units > 0 AND principal_units <= 1000000000),
  processing_fee_units INTEGER NOT NULL CHECK (processing_fee_units >= 0),
  late_fee_type TEXT NOT NULL,
  late_fee_value INTEGER NOT NULL,
  daily_late_fee_units INTEGER NOT NULL CHECK (daily_late_fee_units >= 0),
  late_fee_days INTEGER NOT NULL DEFAULT 0,
  tenure_days INTEGER NOT NULL CHECK (tenure_days IN (3, 7, 15)),
  grace_period_days INTEGER NOT NULL CHECK (grace_period_days BETWEEN 0 AND 30),
  status TEXT NOT NULL CHECK (status IN ('CREATED', 'ACTIVE', 'REPAID', 'DEFAULTED')),
  decision_outcome TEXT CHECK (decision_outcome IN ('APPROVED', 'DECLINED', 'MANUAL_REVIEW')),
  decision_reasons TEXT,
  policy_version INTEGER,
  decided_at INTEGER,
  reviewed_by TEXT,
  reviewed_at INTEGER,
  review_note TEXT,
  funding_state TEXT NOT NULL DEFAULT 'NONE',
  requires_kyc_gate INTEGER NOT NULL DEFAULT 0,
  kyc_confirmed_at INTEGER,
  agreement_id TEXT,
  program_id TEXT REFERENCES widget_programs(id),
  channel TEXT,
  pool_id TEXT REFERENCES liquidity_pools(id),
  funding_tx_hash TEXT,
  due_at INTEGER,
  overdue_at INTEGER,
  funded_at INTEGER,
  repaid_at INTEGER,
  defaulted_at INTEGER,
  write_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX loans_tenant_idempotency_idx ON loans (tenant_id, idempotency_key);
CREATE INDEX loans_tenant_created_idx ON loans (tenant_id, created_at, id);
CREATE INDEX loans_tenant_status_created_idx ON loans (tenant_id, status, decision_outcome, created_at, id);
CREATE INDEX loans_tenant_borrower_idx ON loans (tenant_id, borrower_id, status);
CREATE INDEX loans_status_due_idx ON loans (status, due_at);
CREATE INDEX loans_funding_state_idx ON loans (funding_state, tenant_id, created_at);

CREATE TABLE loan_kyc_confirmations (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  loan_id TEXT NOT NULL REFERENCES loans(id),
  verified INTEGER NOT NULL,
  merchant_user_id TEXT,
  reference TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX loan_kyc_confirmations_loan_idx ON loan_kyc_confirmations (loan_id, created_at);
CREATE TRIGGER loan_kyc_confirmations_no_update BEFORE UPDATE ON loan_kyc_confirmations BEGIN SELECT RAISE(ABORT, 'loan_kyc_confirmations is immutable'); END;
CREATE TRIGGER loan_kyc_confirmations_no_delete BEFORE DELETE ON loan_kyc_confirmations BEGIN SELECT RAISE(ABORT, 'loan_kyc_confirmations is immutable'); END;

CREATE TABLE agreements (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  loan_id TEXT NOT NULL UNIQUE REFERENCES loans(id),
  challenge_id TEXT NOT NULL UNIQUE,
  wallet_address TEXT NOT NULL,
  chain TEXT NOT NULL,
  message TEXT NOT NULL,
  agreement_text TEXT NOT NULL,
  wallet_signature TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TRIGGER agreements_no_update BEFORE UPDATE ON agreements BEGIN SELECT RAISE(ABORT, 'agreements are immutable'); END;
CREATE TRIGGER agreements_no_delete BEFORE DELETE ON agreements BEGIN SELECT RAISE(ABORT, 'agreements are immutable'); END;

CREATE TABLE events (
  id TEXT PRIMARY KEY NOT NULL,
  seq INTEGER NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  type TEXT NOT NULL,
  loan_id TEXT,
  envelope TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  relayed_at INTEGER
);
CREATE INDEX events_tenant_seq_idx ON events (tenant_id, seq);
CREATE INDEX events_tenant_type_idx ON events (tenant_id, type, seq);
CREATE INDEX events_tenant_loan_idx ON events (tenant_id, loan_id, seq);
CREATE INDEX events_unrelayed_idx ON events (relayed_at, seq);

CREATE TABLE settlements (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  loan_id TEXT NOT NULL REFERENCES loans(id),
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  amount_units INTEGER NOT NULL,
  chain TEXT NOT NULL,
  asset TEXT NOT NULL,
  tx_hash TEXT,
  from_address TEXT,
  to_address TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX settlements_loan_idx ON settlements (tenant_id, loan_id, created_at);
CREATE UNIQUE INDEX settlements_loan_kind_tx_idx ON settlements (loan_id, kind, tx_hash);

CREATE TABLE sim_chain_transactions (
  id TEXT PRIMARY KEY NOT NULL,
  chain TEXT NOT NULL,
  tx_hash TEXT NOT NULL UNIQUE,
  reference TEXT NOT NULL UNIQUE,
  asset TEXT NOT NULL,
  from_address TEXT NOT NULL,
  to_address TEXT NOT NULL,
  amount_units INTEGER NOT NULL,
  status TEXT NOT NULL,
  block_number INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

ALTER TABLE liquidity_pools ADD COLUMN low_alert_event_id TEXT;
