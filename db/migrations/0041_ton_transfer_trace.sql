-- How far the traces of a TON funding message got (shared/chains/ton/live/trace-jetton-transfer.ts): the
-- transactions found so far and where the search for the next one goes on, as JSON. Before this, every trace read
-- each account from its newest transaction, at most 200 back: a borrower who buried the receipt under more left the
-- funding pending for good (the loan never ACTIVE), and a wallet buried the same way left an expired message neither
-- confirmed nor signed again.
ALTER TABLE ton_transfers ADD COLUMN trace TEXT;
