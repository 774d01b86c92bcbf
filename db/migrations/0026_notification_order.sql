-- Notifications in their events' order without walking the events (issue 16). A notification
-- list is newest first by its event's outbox `seq` (as GET /v1/events), and was read by walking
-- the tenant's events and joining each one's notification: the unread filter (every dashboard's
-- home and notifications page) walked the tenant's whole history to find its few unread ones,
-- and "mark all read" walked every notification of the mode. A notification now carries its
-- event's seq (written by the relay with the row), lists read it through their own indexes, and
-- the unread ones have an index of their own that holds only them.
ALTER TABLE notifications ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;
UPDATE notifications SET event_seq = COALESCE((SELECT seq FROM events WHERE events.id = notifications.event_id), 0);
DROP INDEX notifications_tenant_idx;
DROP INDEX notifications_tenant_mode_idx;
CREATE INDEX notifications_tenant_seq_idx ON notifications (tenant_id, event_seq);
CREATE INDEX notifications_tenant_mode_seq_idx ON notifications (tenant_id, mode, event_seq);
CREATE INDEX notifications_unread_idx ON notifications (tenant_id, event_seq) WHERE read_at IS NULL;
-- The release before this one (still running until the new code is deployed, the migration
-- going first) inserts notifications without event_seq: such a row takes its event's seq as it
-- is inserted. New code always writes it, so the condition is all this costs it.
CREATE TRIGGER notifications_event_seq_of_event AFTER INSERT ON notifications WHEN NEW.event_seq = 0 BEGIN UPDATE notifications SET event_seq = (SELECT seq FROM events WHERE events.id = NEW.event_id) WHERE id = NEW.id; END;
