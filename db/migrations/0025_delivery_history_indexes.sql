-- The delivery history filtered by status (issue 16): GET /v1/webhooks/deliveries?status=FAILED walked
-- the tenant's whole delivery history, newest first, to fill a page of its rare failures. Its own
-- range now. (The loan filter reads the loan's events and their deliveries by event instead,
-- shared/webhooks/delivery-history.ts; the endpoint and event-type filters still walk, README.)
CREATE INDEX webhook_deliveries_tenant_status_idx ON webhook_deliveries (tenant_id, status, created_at, id);
