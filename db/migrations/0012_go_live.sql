-- Go-live certification (DECISIONS.md "Go-live certification"): the merchant's KYB
-- submissions, the commercial terms the platform operator records, and the operator's
-- audit, which the tenant reads in GET /v1/go-live.

-- One row per submission; the newest is the tenant's KYB. Documents are references
-- (kind, file name, SHA-256), not uploads. The operator's decision moves a SUBMITTED row
-- to APPROVED or REJECTED once; a rejected tenant submits a new row.
CREATE TABLE kyb_submissions (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  legal_name TEXT NOT NULL,
  registration_number TEXT NOT NULL,
  country TEXT NOT NULL,
  documents TEXT NOT NULL,
  status TEXT NOT NULL,
  submitted_by TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  decided_at INTEGER,
  decision_note TEXT
);
CREATE INDEX kyb_submissions_tenant_idx ON kyb_submissions (tenant_id, submitted_at);

-- Commercial terms recorded by the operator; append-only (a new agreement is a new row).
CREATE TABLE commercial_terms (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  reference TEXT NOT NULL,
  note TEXT,
  recorded_at INTEGER NOT NULL
);
CREATE INDEX commercial_terms_tenant_idx ON commercial_terms (tenant_id, recorded_at);
CREATE TRIGGER commercial_terms_no_update BEFORE UPDATE ON commercial_terms BEGIN SELECT RAISE(ABORT, 'commercial_terms are immutable'); END;
CREATE TRIGGER commercial_terms_no_delete BEFORE DELETE ON commercial_terms BEGIN SELECT RAISE(ABORT, 'commercial_terms are immutable'); END;

-- Every operator action, written in the same batch as the change it records. Immutable:
-- who decided what and when must not be rewritten.
CREATE TABLE operator_audit (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  decision TEXT,
  note TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX operator_audit_tenant_idx ON operator_audit (tenant_id, created_at);
CREATE TRIGGER operator_audit_no_update BEFORE UPDATE ON operator_audit BEGIN SELECT RAISE(ABORT, 'operator_audit is immutable'); END;
CREATE TRIGGER operator_audit_no_delete BEFORE DELETE ON operator_audit BEGIN SELECT RAISE(ABORT, 'operator_audit is immutable'); END;
