-- The simulated chains now keep their own state (a Durable Object per chain, with balances,
-- allowances, nonces, blocks and logs); the table-based stand-in of the loans issue goes.
DROP TABLE sim_chain_transactions;
