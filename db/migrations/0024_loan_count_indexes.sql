-- Loan creation's counts through an index whose range is the borrower's (or the credit line's) own
-- loans (issue 16). Without ANALYZE statistics SQLite ties two indexes that each match two equality
-- terms, and the count of a borrower's open loans of one mode (tenant_id, borrower_id, mode, status)
-- went through loans_tenant_mode_created_idx (tenant_id, mode): every one of the tenant's loans of
-- the mode, twice per loan created (its reads and its decision's guard), so creation slowed as the
-- tenant's history grew. This index matches three equality terms and wins; it replaces
-- loans_tenant_borrower_idx (tenant_id, borrower_id, status), whose queries use its prefix.
DROP INDEX loans_tenant_borrower_idx;
CREATE INDEX loans_tenant_borrower_mode_idx ON loans (tenant_id, borrower_id, mode, status);
-- A credit line's open principal (tenant_id, program_id, borrower_wallet_address): summed by every
-- widget draw's guarded insert and every credit-line read. Only widget loans have a program.
CREATE INDEX loans_tenant_line_idx ON loans (tenant_id, program_id, borrower_wallet_address, status) WHERE program_id IS NOT NULL;
-- GET /v1/loans with a filter, newest first: an API key's list always has its key's mode, and
-- (tenant_id, mode, created_at) walked the tenant's whole history of the mode to fill a page of a
-- rare status, borrower or wallet. A status filter reads its own range of the mode; a borrower's ref
-- or wallet reads that borrower's loans (the mode then compared as +mode, shared/loans/list-loans.ts,
-- so a session's list of both modes uses the same index).
CREATE INDEX loans_tenant_mode_status_created_idx ON loans (tenant_id, mode, status, created_at, id);
CREATE INDEX loans_tenant_ref_created_idx ON loans (tenant_id, borrower_ref, created_at, id);
CREATE INDEX loans_tenant_wallet_created_idx ON loans (tenant_id, borrower_wallet_address, created_at, id);
