-- E-mail verification: no notification e-mail goes to an address until its owner has
-- proved it is theirs by following a single-use, expiring link. Existing users start
-- unverified (they never proved it either) and can ask for a link from the dashboard.
ALTER TABLE users ADD COLUMN email_verified_at INTEGER;

-- One row per link sent. Only the SHA-256 of the token is kept; the token itself exists
-- only in the e-mail. `email` is the address the link was sent to, so a link proves that
-- address and no other.
CREATE TABLE email_verifications (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id),
  email TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX email_verifications_token_idx ON email_verifications (token_hash);
CREATE INDEX email_verifications_user_idx ON email_verifications (user_id, created_at);
