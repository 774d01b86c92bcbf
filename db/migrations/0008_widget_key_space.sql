-- Widget draws get their own idempotency key space (issue 10, item 1): a loan's key is unique
-- per (tenant, scope, key), where API loans have scope 'api' and widget draws
-- 'embed:<programId>:<wallet>'. A merchant's POST /v1/loans and a widget accept can no longer
-- find, return or block each other's loans, whatever keys either sends.
ALTER TABLE loans ADD COLUMN idempotency_scope TEXT NOT NULL DEFAULT 'api';
UPDATE loans SET idempotency_scope = 'embed:' || program_id || ':' || borrower_wallet_address WHERE program_id IS NOT NULL;
DROP INDEX loans_tenant_idempotency_idx;
CREATE UNIQUE INDEX loans_tenant_scope_idempotency_idx ON loans (tenant_id, idempotency_scope, idempotency_key);

-- Wallet-session challenges are stateless (HMAC'ed); this records the ones a verified
-- signature has used, so each opens at most one session. Rows past expiry are pruned.
CREATE TABLE wallet_session_challenges (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  expires_at INTEGER NOT NULL,
  used_at INTEGER NOT NULL
);
CREATE INDEX wallet_session_challenges_tenant_expiry_idx ON wallet_session_challenges (tenant_id, expires_at);
