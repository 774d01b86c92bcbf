-- Verification links are counted per address, not per user, and outlive the user they were
-- sent for: removing a user and adding the address again must not start a fresh budget of
-- e-mails to it. So the link's row no longer references users (a removal leaves its rows;
-- retention takes them once expired), and is read by address.
CREATE TABLE email_verifications_new (
  id TEXT PRIMARY KEY NOT NULL,
  user_id TEXT NOT NULL,
  email TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  created_at INTEGER NOT NULL
);
INSERT INTO email_verifications_new (id, user_id, email, token_hash, expires_at, used_at, created_at)
  SELECT id, user_id, email, token_hash, expires_at, used_at, created_at FROM email_verifications;
DROP TABLE email_verifications;
ALTER TABLE email_verifications_new RENAME TO email_verifications;
CREATE UNIQUE INDEX email_verifications_token_idx ON email_verifications (token_hash);
CREATE INDEX email_verifications_user_idx ON email_verifications (user_id, created_at);
CREATE INDEX email_verifications_email_idx ON email_verifications (email, created_at);
CREATE INDEX email_verifications_expiry_idx ON email_verifications (expires_at);
