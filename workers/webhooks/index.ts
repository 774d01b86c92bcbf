import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createHealthApp } from "../../shared/http/health-app.ts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import { consumeDeadLetters, DELIVERIES_DLQ } from "./consume-dead-letters.ts";
import { consumeDeliveries } from "./consume-deliveries.ts";
import { webhookDepsOfIsolate } from "./deps.ts";
import { withRequiredSecrets } from "../../shared/config/required-secrets.ts";
import { REQUIRED_SECRETS, type WebhooksEnv } from "./env.ts";

/** Not publicly routed (workers_dev = false); the local stack polls it. */
const app = createHealthApp("webhooks");

export default withRequiredSecrets(REQUIRED_SECRETS, {
  async queue(batch, env) {
    const deps = webhookDepsOfIsolate(withChaos(env, "webhooks"));
    // The worker consumes two queues: the deliveries, and their dead letters.
    if (batch.queue === DELIVERIES_DLQ) await consumeDeadLetters(batch, deps);
    else await consumeDeliveries(batch, deps);
  },
  fetch: app.fetch,
} satisfies ExportedHandler<WebhooksEnv, DeliveryMessage>);
