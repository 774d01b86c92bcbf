-- The per-tenant sweep (sandbox tenants with an advanced clock, and clock/advance) reads
-- ACTIVE loans of one tenant past their due time.
CREATE INDEX loans_tenant_status_due_idx ON loans (tenant_id, status, due_at);
