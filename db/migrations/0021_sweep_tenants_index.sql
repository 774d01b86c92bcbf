-- Scale (issue 16). Every sweep reads the tenants whose sandbox clock was moved
-- (clock_offset_ms > 0): through this index that read visits only those tenants,
-- instead of every tenant that ever signed up.
CREATE INDEX tenants_clock_offset_idx ON tenants (clock_offset_ms);
