-- Scans that grow with history (issue 17). The relay, the recovery pass and the retention job
-- read through indexes whose size follows the work waiting, not everything ever written.
--
-- The api's relay after a write reads that tenant's unrelayed events in outbox order: only
-- unrelayed events are in this index, so a tenant's relayed history is never walked.
CREATE INDEX events_unrelayed_tenant_idx ON events (tenant_id, seq) WHERE relayed_at IS NULL;
-- The recovery pass re-sends PENDING deliveries and owner e-mails whose lease ran out. The
-- (status, next_attempt_at) indexes held a row for every delivery and notification ever made;
-- these hold only the PENDING ones.
DROP INDEX webhook_deliveries_pending_idx;
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
DROP INDEX notifications_email_pending_idx;
CREATE INDEX notifications_email_pending_idx ON notifications (email_next_attempt_at) WHERE email_status = 'PENDING';
-- The relay messages the deliveries of the events it claimed, and the retention job removes an
-- event's deliveries, by event id (the unique (event_id, endpoint_id) index is partial to
-- first deliveries, so neither could use it).
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
-- The retention job removes proof-of-control challenges and e-mail verification links long
-- past their expiry, through these.
CREATE INDEX wallet_challenges_expiry_idx ON wallet_challenges (expires_at);
CREATE INDEX email_verifications_expiry_idx ON email_verifications (expires_at);
