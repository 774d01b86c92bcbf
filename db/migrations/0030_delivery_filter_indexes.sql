-- The delivery history's last two filters within their own rows (issue 16): an endpoint's
-- deliveries (endpointId) and a mode's deliveries of one event type (eventType) walked the
-- mode's whole history newest first. An endpoint's deliveries by the endpoint (which also
-- spares the foreign key check of an endpoint's removal a scan), a type's by the type.
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_tenant_mode_type_idx ON webhook_deliveries (tenant_id, mode, event_type, created_at, id);
