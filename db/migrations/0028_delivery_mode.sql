-- The delivery history of one mode without walking the other's (issue 16). A delivery's mode
-- was its endpoint's, joined: GET /v1/webhooks/deliveries of one mode (an API key's, the
-- dashboard's Developers page) walked the tenant's deliveries of both modes, newest first, so
-- a tenant fresh from go-live listing its few live deliveries read its whole sandbox history.
-- A delivery now carries its endpoint's mode, and the history's two indexes lead with it.
ALTER TABLE webhook_deliveries ADD COLUMN mode TEXT NOT NULL DEFAULT '';
UPDATE webhook_deliveries SET mode = COALESCE((SELECT mode FROM webhook_endpoints WHERE webhook_endpoints.id = webhook_deliveries.endpoint_id), 'sandbox');
DROP INDEX webhook_deliveries_tenant_idx;
DROP INDEX webhook_deliveries_tenant_status_idx;
CREATE INDEX webhook_deliveries_tenant_mode_idx ON webhook_deliveries (tenant_id, mode, created_at, id);
CREATE INDEX webhook_deliveries_tenant_mode_status_idx ON webhook_deliveries (tenant_id, mode, status, created_at, id);
-- The release before this one (still running until the new code is deployed, the migration
-- going first) inserts deliveries without a mode (''): such a row takes its endpoint's as it is
-- inserted. New code always writes it, so the condition is all this costs it.
CREATE TRIGGER webhook_deliveries_mode_of_endpoint AFTER INSERT ON webhook_deliveries WHEN NEW.mode = '' BEGIN UPDATE webhook_deliveries SET mode = COALESCE((SELECT mode FROM webhook_endpoints WHERE webhook_endpoints.id = NEW.endpoint_id), 'sandbox') WHERE id = NEW.id; END;
