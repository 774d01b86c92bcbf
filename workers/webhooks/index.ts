import { withChaos } from "../../shared/chaos/chaos-env.ts";
import { createHealthApp } from "../../shared/http/health-app.ts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import { consumeDeliveries } from "./consume-deliveries.ts";
import { webhookDepsFromEnv } from "./deps.ts";
import { withRequiredSecrets } from "../../shared/config/required-secrets.ts";
import { REQUIRED_SECRETS, type WebhooksEnv } from "./env.ts";

/** Not publicly routed (workers_dev = false); the local stack polls it. */
const app = createHealthApp("webhooks");

export default withRequiredSecrets(REQUIRED_SECRETS, {
  async queue(batch, env) {
    await consumeDeliveries(batch, webhookDepsFromEnv(withChaos(env, "webhooks")));
  },
  fetch: app.fetch,
} satisfies ExportedHandler<WebhooksEnv, DeliveryMessage>);
