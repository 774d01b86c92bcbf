-- Whether a kept payment is in the chain's settlement asset and can repay a loan once
-- attributed. A TON transfer, or a jetton notification that does not come from the canonical
-- USDT jetton wallet (anyone can send one claiming any amount), is kept for the record but
-- can never be attributed: it moved no USDT.
ALTER TABLE unmatched_payments ADD COLUMN settles INTEGER NOT NULL DEFAULT 1;
