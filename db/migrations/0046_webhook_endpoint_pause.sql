-- An endpoint that keeps timing out is paused. Each attempt to an endpoint that never answers holds one of a consumer
-- invocation's six request slots for the whole timeout (10 s), and the deliveries queue is shared by every tenant: an
-- audit had one free sandbox tenant's 10 hanging endpoints delay every other tenant's webhooks by minutes, growing for
-- hours. After 3 timeouts in a row (timeouts_in_a_row) of an endpoint that has not answered for a while (answered_at,
-- unix ms), its attempts wait until paused_until (unix ms; 3 timeouts' worth, doubling with each further one, at most 10
-- minutes): they go back to the queue unsent, so they cost no slot and count as no attempt. Any answer, whatever its
-- status, resets both.
ALTER TABLE webhook_endpoints ADD COLUMN timeouts_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN paused_until INTEGER;
ALTER TABLE webhook_endpoints ADD COLUMN answered_at INTEGER;
