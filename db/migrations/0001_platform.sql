-- Platform: tenants, dashboard users, API keys, settings, merchant configurations,
-- loan products, widget programs, liquidity pools.
-- Timestamps are INTEGER milliseconds since the epoch; amounts are INTEGER base units (10^-6).
-- One statement per `;`-terminated block: the runner splits on lines ending in `;`.

CREATE TABLE tenants (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  mode TEXT NOT NULL DEFAULT 'sandbox' CHECK (mode IN ('sandbox', 'live')),
  certified_at INTEGER,
  clock_offset_ms INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);

CREATE TABLE users (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  email TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
  password_hash TEXT NOT NULL,
  password_salt TEXT NOT NULL,
  password_iterations INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX users_tenant_idx ON users (tenant_id);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  created_by_user_id TEXT REFERENCES users(id),
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at);

CREATE TABLE tenant_settings (
  tenant_id TEXT PRIMARY KEY NOT NULL REFERENCES tenants(id),
  requires_kyc_before_funding INTEGER NOT NULL DEFAULT 0,
  company_name TEXT,
  logo_url TEXT,
  primary_color TEXT,
  support_email TEXT,
  terms_url TEXT,
  updated_at INTEGER NOT NULL
);

CREATE TABLE merchant_configs (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  network TEXT NOT NULL CHECK (network IN ('TON', 'POLYGON', 'BASE')),
  stablecoin TEXT NOT NULL CHECK (stablecoin IN ('USDT', 'USDC')),
  tenures TEXT NOT NULL,
  min_ticket_units INTEGER NOT NULL CHECK (min_ticket_units > 0),
  max_ticket_units INTEGER NOT NULL CHECK (max_ticket_units <= 1000000000 AND max_ticket_units >= min_ticket_units),
  grace_period_days INTEGER NOT NULL CHECK (grace_period_days BETWEEN 0 AND 30),
  processing_fee_type TEXT NOT NULL CHECK (processing_fee_type IN ('FIXED', 'PERCENTAGE')),
  processing_fee_value INTEGER NOT NULL CHECK (processing_fee_value >= 0),
  late_fee_type TEXT NOT NULL CHECK (late_fee_type IN ('FIXED', 'PERCENTAGE')),
  late_fee_value INTEGER NOT NULL CHECK (late_fee_value >= 0),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX merchant_configs_tenant_idx ON merchant_configs (tenant_id, created_at);

CREATE TABLE loan_products (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  merchant_config_id TEXT NOT NULL UNIQUE REFERENCES merchant_configs(id),
  version TEXT NOT NULL DEFAULT 'v1',
  status TEXT NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
  network TEXT NOT NULL,
  stablecoin TEXT NOT NULL,
  tenures TEXT NOT NULL,
  min_ticket_units INTEGER NOT NULL,
  max_ticket_units INTEGER NOT NULL,
  grace_period_days INTEGER NOT NULL,
  processing_fee_type TEXT NOT NULL,
  processing_fee_value INTEGER NOT NULL,
  late_fee_type TEXT NOT NULL,
  late_fee_value INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX loan_products_tenant_idx ON loan_products (tenant_id);

CREATE TABLE widget_programs (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  merchant_config_id TEXT NOT NULL REFERENCES merchant_configs(id),
  name TEXT NOT NULL,
  embed_key TEXT NOT NULL UNIQUE,
  allowed_origins TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX widget_programs_tenant_idx ON widget_programs (tenant_id, created_at);

CREATE TABLE liquidity_pools (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT REFERENCES tenants(id),
  mode TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
  stablecoin TEXT NOT NULL,
  available_units INTEGER NOT NULL CHECK (available_units >= 0),
  reserved_units INTEGER NOT NULL DEFAULT 0 CHECK (reserved_units >= 0),
  low_threshold_units INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX liquidity_pools_tenant_idx ON liquidity_pools (tenant_id);
