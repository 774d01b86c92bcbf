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
