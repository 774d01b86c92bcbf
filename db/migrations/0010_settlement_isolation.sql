-- Attribution of an unmatched payment claims it with a fresh token in the same batch as the
-- loan's credit, and the credit holds only if that claim was made: one payment, one loan.
ALTER TABLE unmatched_payments ADD COLUMN attribution_claim TEXT;
