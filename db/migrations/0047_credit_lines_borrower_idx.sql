-- A borrower's KYC set to anything but VERIFIED (PATCH /v1/borrowers/:id/kyc) withdraws the KYC confirmation of every
-- credit line booked under that borrower, in the same batch (shared/borrowers/borrower-verbs.ts): an audit drew a second
-- widget loan, funded, for a borrower the merchant had just failed. This index finds those lines.
CREATE INDEX credit_lines_tenant_borrower_idx ON credit_lines (tenant_id, borrower_ref);
