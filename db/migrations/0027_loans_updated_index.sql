-- The dashboard Home's numbers without reading the mode's whole history (issue 16): GET
-- /v1/stats/today aggregated every loan of the mode on each visit. Every change of a loan sets
-- its updated_at, so the loans with any of today's timestamps are those updated since midnight:
-- this index reads them per stablecoin (shared/stats/today-stats.ts), and says in one entry
-- whether the mode has loans of a stablecoin at all.
CREATE INDEX loans_tenant_mode_coin_updated_idx ON loans (tenant_id, mode, stablecoin, updated_at);
