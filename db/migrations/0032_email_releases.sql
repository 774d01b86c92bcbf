-- Freeing an e-mail address that someone else used: e-mail addresses are unique across
-- tenants and an address is not proven when it is used (signup, POST /v1/users), so anyone
-- can hold someone else's address and stop them signing up. The address's owner asks for a
-- release link (POST /v1/auth/release-email); following it removes the account that holds
-- the address, if that account never proved it (email_verified_at IS NULL).
-- One row per link sent: only the SHA-256 of the token is kept. `user_id` is the account
-- that held the address when the link was sent (no foreign key: the row outlives the
-- account it frees); the link frees that account only, and only at that address.
-- `freed_at`: when following the link removed the account. For 24 hours after, the address is
-- held for the person who followed it: signup takes it only with the link's token, and
-- POST /v1/users not at all, so whoever held it cannot take it back first.
CREATE TABLE email_releases (
  id TEXT PRIMARY KEY NOT NULL,
  email TEXT NOT NULL,
  user_id TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  freed_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX email_releases_token_idx ON email_releases (token_hash);
CREATE INDEX email_releases_email_idx ON email_releases (email, created_at);
CREATE INDEX email_releases_expiry_idx ON email_releases (expires_at);
