-- Webhooks: endpoints (secret encrypted at rest), deliveries (one per event and endpoint,
-- plus manual redeliveries), attempts (claimed before sending, finished after), tenant
-- notifications with their e-mail status, and the local mailbox of development runs.

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret_ciphertext TEXT NOT NULL,
  secret_prefix TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  event_id TEXT NOT NULL REFERENCES events(id),
  event_type TEXT NOT NULL,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
  redelivery_of TEXT,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  attempt_count INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count BETWEEN 0 AND 3),
  next_attempt_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_event_endpoint_idx ON webhook_deliveries (event_id, endpoint_id) WHERE redelivery_of IS NULL;
CREATE INDEX webhook_deliveries_tenant_idx ON webhook_deliveries (tenant_id, created_at, id);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (status, next_attempt_at);

CREATE TABLE webhook_attempts (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
  attempt INTEGER NOT NULL CHECK (attempt BETWEEN 1 AND 3),
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  duration_ms INTEGER,
  response_status INTEGER,
  error TEXT,
  succeeded INTEGER
);
CREATE UNIQUE INDEX webhook_attempts_delivery_attempt_idx ON webhook_attempts (delivery_id, attempt);

CREATE TABLE notifications (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  event_id TEXT NOT NULL UNIQUE REFERENCES events(id),
  event_type TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  read_at INTEGER,
  email_to TEXT,
  email_status TEXT NOT NULL CHECK (email_status IN ('PENDING', 'SENT', 'FAILED', 'SKIPPED')),
  email_attempts INTEGER NOT NULL DEFAULT 0,
  email_error TEXT,
  email_sent_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX notifications_tenant_idx ON notifications (tenant_id, created_at, id);

CREATE TABLE mailbox (
  id TEXT PRIMARY KEY NOT NULL,
  to_address TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  notification_id TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX mailbox_created_idx ON mailbox (created_at);
