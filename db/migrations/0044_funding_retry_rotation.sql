-- The funding retry job (cron, each minute) read the 100 oldest loans waiting to be funded and nothing else. Anyone
-- with a free sandbox account could keep 100 loans waiting (a sandbox pool set to 0), and then no other tenant's
-- waiting loan was ever retried: live loans whose funding transaction was broadcast were never followed to ACTIVE.
-- Now each run takes live loans before sandbox ones, least recently retried first, and marks the loans it takes
-- with its turn (funding_retry_mark: the run's time in unix ms, or one past the highest mark if that is not later;
-- NULL for never retried), so every waiting loan gets its turn. The partial index holds only loans waiting to be
-- funded, in the order the job reads them.
ALTER TABLE loans ADD COLUMN funding_retry_mark INTEGER;
CREATE INDEX loans_funding_retry_idx ON loans (mode, funding_retry_mark, created_at, id)
  WHERE status = 'CREATED' AND decision_outcome = 'APPROVED' AND funding_state IN ('NONE', 'AWAITING_LIQUIDITY', 'HELD', 'RESERVED');
