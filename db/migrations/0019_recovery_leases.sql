-- Fast recovery (issue 15). An owner e-mail's next attempt is due at email_next_attempt_at: set
-- when its event is relayed, pushed to the end of a lease while an attempt is out (the mail
-- timeout plus a margin) and to the retry delay after a failure. The recovery pass re-sends
-- the e-mails (and deliveries, by next_attempt_at) whose message was lost, once that time has
-- passed by a lease, instead of five minutes after the relay; retries whose message was lost
-- are recovered the same way.
ALTER TABLE notifications ADD COLUMN email_next_attempt_at INTEGER;
UPDATE notifications SET email_next_attempt_at = created_at WHERE email_status = 'PENDING';
CREATE INDEX notifications_email_pending_idx ON notifications (email_status, email_next_attempt_at);
