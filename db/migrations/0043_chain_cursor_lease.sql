-- Live EVM: one poll of a chain at a time. A poll takes the chain's lease (lease_id, lease_until: unix ms) before it
-- reads anything, renews it at every page and gives it back at its end; a poll that finds it held by a live poll
-- does nothing. Before, two polls could overlap (a slow one and the next tick's), and one could credit a payment
-- from a block the other had just found orphaned and undone: a credit no later poll saw to reverse.
ALTER TABLE chain_cursors ADD COLUMN lease_id TEXT;
ALTER TABLE chain_cursors ADD COLUMN lease_until INTEGER;
