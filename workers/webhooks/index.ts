import { createHealthApp } from "../../shared/http/health-app.ts";
import { consumeDeliveries } from "./consume-deliveries.ts";
import type { WebhooksEnv } from "./env.ts";

/** Not publicly routed (workers_dev = false); the local stack polls it. */
const app = createHealthApp("webhooks");

export default {
  async queue(batch) {
    await consumeDeliveries(batch);
  },
  fetch: app.fetch,
} satisfies ExportedHandler<WebhooksEnv, unknown>;
