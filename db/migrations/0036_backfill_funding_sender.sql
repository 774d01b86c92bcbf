-- Live loans RESERVED before migration 0034 have no recorded sender, and their transfer may be
-- in flight from any of the tenant's DISBURSEMENT wallets; the funding code leaves such a loan
-- as it is (it sends nothing and releases nothing) until its sender is known. Where the tenant
-- has exactly one wallet that could have sent it (on the loan's chain, DISBURSEMENT, verified,
-- not deleted, with an installed signer), that wallet is the sender. Any other such loan is
-- settled by the operator (README "Live funding").
UPDATE loans
SET funding_from = (
  SELECT w.address FROM wallets w
  JOIN signers s ON s.tenant_id = w.tenant_id AND s.chain = w.chain AND s.address = w.address
  WHERE w.tenant_id = loans.tenant_id AND w.chain = loans.chain AND w.role = 'DISBURSEMENT'
    AND w.deleted_at IS NULL AND w.verified_at IS NOT NULL
)
WHERE mode = 'live' AND funding_state = 'RESERVED' AND funding_from IS NULL
  AND (
    SELECT count(*) FROM wallets w
    JOIN signers s ON s.tenant_id = w.tenant_id AND s.chain = w.chain AND s.address = w.address
    WHERE w.tenant_id = loans.tenant_id AND w.chain = loans.chain AND w.role = 'DISBURSEMENT'
      AND w.deleted_at IS NULL AND w.verified_at IS NOT NULL
  ) = 1;
