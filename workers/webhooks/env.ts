/** Bindings and vars of the webhooks worker (workers/webhooks/wrangler.toml). */
export type WebhooksEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  /** The deliveries queue; the worker re-enqueues a failed attempt with its backoff delay. */
  WEBHOOK_DELIVERIES: Queue<unknown>;
};
