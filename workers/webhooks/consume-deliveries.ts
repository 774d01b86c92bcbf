import { safeErrorFields } from "../../shared/observability/logger.ts";
import { sendNotificationEmail } from "../../shared/notifications/send-notification-email.ts";
import { processDeliveryMessage, type MessageOutcome } from "../../shared/webhooks/deliver.ts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import { relayOutbox } from "../../shared/webhooks/relay-outbox.ts";
import type { webhookDepsFromEnv } from "./deps.ts";

type Deps = ReturnType<typeof webhookDepsFromEnv>;

/**
 * The deliveries Queue consumer. Each message is handled on its own; a
 * "not yet" outcome is re-sent with its delay (rather than `retry()`, which
 * would spend the Queue's own retry budget); an unexpected error retries the
 * message. A delivery that ended FAILED wrote a `webhook.delivery_failed`:
 * its tenant's outbox is relayed at once, so it goes out now.
 */
export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, deps: Deps): Promise<void> {
  const failedFor = new Set<string>();
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const body = message.body;
        const outcome: MessageOutcome =
          body.kind === "delivery"
            ? await processDeliveryMessage(deps, body)
            : await sendNotificationEmail({ db: deps.db, mail: deps.mail, clock: deps.clock, retrySeconds: deps.emailRetrySeconds }, body.notificationId);
        if (!outcome.ack) await deps.queue.send(body, { delaySeconds: outcome.retryInSeconds });
        else if ("failedForTenant" in outcome && outcome.failedForTenant) failedFor.add(outcome.failedForTenant);
        message.ack();
      } catch (err) {
        deps.log.error("delivery message failed", { messageId: message.id, ...safeErrorFields(err) });
        message.retry({ delaySeconds: 5 });
      }
    }),
  );
  for (const tenantId of failedFor) {
    try {
      await relayOutbox(deps, { now: deps.clock.now(), tenantId });
    } catch (err) {
      deps.log.error("relay after deliveries failed", { tenantId, ...safeErrorFields(err) });
    }
  }
}
