-- Modes (DECISIONS.md "Modes: sandbox and live side by side"): a tenant keeps its sandbox
-- after certification, so the mode moves from the tenant to what acts and what is recorded.
-- Every existing row is sandbox: no tenant was ever certified before this migration, so no
-- key is live (every existing key reads svc_test_…) and no loan is on a live chain.
ALTER TABLE api_keys ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';
ALTER TABLE loans ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';
ALTER TABLE events ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';
ALTER TABLE settlements ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';
ALTER TABLE notifications ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';
-- A webhook endpoint receives the events of one mode: a sandbox key's endpoint never sees live
-- loans. Existing endpoints only ever received sandbox events.
ALTER TABLE webhook_endpoints ADD COLUMN mode TEXT NOT NULL DEFAULT 'sandbox';

-- The lists of one mode read these ranges (a key sees only its own mode).
CREATE INDEX loans_tenant_mode_created_idx ON loans (tenant_id, mode, created_at, id);
CREATE INDEX events_tenant_mode_seq_idx ON events (tenant_id, mode, seq);
CREATE INDEX notifications_tenant_mode_idx ON notifications (tenant_id, mode, created_at, id);
