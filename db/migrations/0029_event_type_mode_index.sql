-- The events of a type in one mode without walking the other mode's (issue 16). GET
-- /v1/events?type= of an API key (its mode) read (tenant_id, type, seq) and tested each event's
-- mode: a tenant fresh from go-live asking for its live loan.funded events walked every sandbox
-- one (bench:history: 38 ms a page at 100,000 loans). The index leads with the mode now; a
-- session's list of both modes reads each mode's page and merges them.
DROP INDEX events_tenant_type_idx;
CREATE INDEX events_tenant_mode_type_idx ON events (tenant_id, mode, type, seq);
