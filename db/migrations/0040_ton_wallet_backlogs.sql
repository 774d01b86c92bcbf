-- Where a TON COLLECTIONS wallet's listener is in a backlog larger than one poll reads (TON lists an account's
-- transactions newest first only): the (lt, hash) of the oldest transaction each earlier poll read, newest first, as
-- JSON. Each poll walks back from the oldest of them (or from the newest transaction when there are none) towards the
-- cursor; one that reaches it applies what it read, oldest first, and drops that waypoint. Before this, a backlog of
-- more than 2,000 transactions (anyone can send a wallet transactions) failed every poll, and no repayment to the
-- wallet was credited again.
CREATE TABLE ton_wallet_backlogs (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  address TEXT NOT NULL,
  waypoints TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, address)
);
