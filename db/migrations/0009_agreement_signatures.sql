-- Agreements keep everything needed to re-verify the signature later: for TON Connect signData
-- the wallet's public key, the signature's timestamp and domain (null on EVM and Solana).
-- Widget draws now store their agreement too, committed with the loan. The agreements table
-- stays immutable (0002's triggers cover the new columns); a loan's agreement, once linked, is
-- never replaced or unlinked (one line per trigger, so the statement splitter keeps it whole).

ALTER TABLE agreements ADD COLUMN public_key TEXT;
ALTER TABLE agreements ADD COLUMN signed_timestamp INTEGER;
ALTER TABLE agreements ADD COLUMN domain TEXT;
CREATE TRIGGER loans_agreement_fixed BEFORE UPDATE OF agreement_id ON loans WHEN OLD.agreement_id IS NOT NULL AND NEW.agreement_id IS NOT OLD.agreement_id BEGIN SELECT RAISE(ABORT, 'a loan''s agreement is immutable'); END;
