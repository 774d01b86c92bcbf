-- When a payment was made (issue 15): the time of its transfer on the loan's clock (block time;
-- a sandbox ledger stamps its blocks with the tenant's sandbox time of the write). A repayment is
-- judged at it, whenever the listener or an attribution gets to it (shared/settlement/apply-repayment.ts).
-- Settlements keep it so that a payment applied out of order (an attribution of an older kept
-- payment) counts from the newest payment already credited; unmatched payments keep it so that an
-- attribution judges the payment when it was made, not when it was kept.
-- Rows from before: their created_at, the closest time recorded (for a repayment, when the
-- listener applied it; for a kept payment, when it was kept, on the system clock if the listener
-- kept it, the sandbox offset of the time unknown). A payment never counts from before its loan's
-- funding, so a kept payment of a sandbox tenant dated early at worst owes no late fee.
ALTER TABLE settlements ADD COLUMN paid_at INTEGER NOT NULL DEFAULT 0;
UPDATE settlements SET paid_at = created_at;
ALTER TABLE unmatched_payments ADD COLUMN paid_at INTEGER NOT NULL DEFAULT 0;
UPDATE unmatched_payments SET paid_at = created_at;
