-- The wallet a live loan's principal is sent from, fixed when the loan reserves it. A live
-- transfer is idempotent per sender (each DISBURSEMENT wallet keeps its own record of the
-- references it sent), so a loan whose transfer may be in flight must keep asking that
-- wallet's record, never pick another wallet and send again. Null for sandbox loans and for
-- loans that hold no reservation.
ALTER TABLE loans ADD COLUMN funding_from TEXT;
