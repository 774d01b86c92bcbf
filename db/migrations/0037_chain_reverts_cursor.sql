-- Live EVM: the last block the listener has searched for reverted `repay` calls to the pool
-- (a reverted transaction has no logs, so `eth_getLogs` never finds one; the blocks are read
-- whole instead, at most 200 a poll, behind the log cursor). NULL: start at the log cursor
-- (a deployment before this column does not search its history).
ALTER TABLE chain_cursors ADD COLUMN reverts_scanned_to INTEGER;
