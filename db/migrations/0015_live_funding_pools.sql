-- Live funding (DECISIONS.md "Live wallets"): a live pool per (tenant, chain), mirroring the
-- tenant's DISBURSEMENT wallet on that chain. Its available_units is refreshed from the
-- wallet's on-chain stablecoin balance right before each reservation, so headroom = balance
-- minus principal reserved for live loans in flight. Sandbox and shared pools keep chain NULL.
ALTER TABLE liquidity_pools ADD COLUMN chain TEXT;
CREATE UNIQUE INDEX liquidity_pools_live_chain_idx ON liquidity_pools (tenant_id, chain) WHERE chain IS NOT NULL;
