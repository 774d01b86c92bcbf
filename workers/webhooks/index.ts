import { errorBodyForStatus } from "../../shared/domain/errors.ts";
import { consumeDeliveries } from "./consume-deliveries.ts";
import type { WebhooksEnv } from "./env.ts";

export default {
  async queue(batch) {
    await consumeDeliveries(batch);
  },
  /** Not publicly routed (workers_dev = false); the local stack polls it. */
  async fetch(request) {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/health") {
      return Response.json({ status: "ok", service: "webhooks" });
    }
    return Response.json(errorBodyForStatus(404, `No route for ${request.method} ${url.pathname}`), { status: 404 });
  },
} satisfies ExportedHandler<WebhooksEnv, unknown>;
