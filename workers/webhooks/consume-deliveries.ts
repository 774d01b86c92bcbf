import { safeErrorFields } from "../../shared/observability/logger.ts";
import { sendNotificationEmail } from "../../shared/notifications/send-notification-email.ts";
import { processDeliveryBatch, type MessageOutcome } from "../../shared/webhooks/deliver.ts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import { relayOutbox } from "../../shared/webhooks/relay-outbox.ts";
import type { webhookDepsFromEnv } from "./deps.ts";

type Deps = ReturnType<typeof webhookDepsFromEnv>;

/**
 * The Queue retry's delay after the `attempts`-th failed try of a message:
 * 5, 20, 80 s. With max_retries = 3 a message rides out about 2 minutes of
 * an overloaded database before it is dead-lettered.
 */
export const retryDelaySeconds = (attempts: number) => Math.min(300, 5 * 4 ** Math.max(0, attempts - 1));

/**
 * The deliveries Queue consumer. The batch's webhook deliveries are handled
 * together (processDeliveryBatch: a few D1 round trips for the whole batch,
 * the requests sent concurrently); each owner e-mail on its own. A "not yet"
 * outcome is re-sent with its delay (rather than `retry()`, which would spend
 * the Queue's own retry budget); an error (D1 overloaded, most often) retries
 * the messages it concerns with a growing delay (retryDelaySeconds). Such a
 * retry spends the Queue's retries, never the delivery's 3 attempts: the
 * attempt count lives in D1 and only grows when an outcome is recorded, and
 * a retried message resumes the attempt it had claimed (deliver.ts,
 * claimIdOf). After max_retries the message goes to the dead-letter queue
 * (consume-dead-letters.ts). A delivery that ended FAILED wrote a
 * `webhook.delivery_failed`: its tenant's outbox is relayed at once, so it
 * goes out now.
 */
export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, deps: Deps): Promise<void> {
  const failedFor = new Set<string>();
  const settle = async (message: Message<DeliveryMessage>, outcome: MessageOutcome) => {
    if (!outcome.ack) await deps.queue.send(message.body, { delaySeconds: outcome.retryInSeconds });
    else if ("failedForTenant" in outcome && outcome.failedForTenant) failedFor.add(outcome.failedForTenant);
    message.ack();
  };
  const failed = (messages: Message<DeliveryMessage>[], err: unknown) => {
    deps.log.error("delivery messages failed", { messageIds: messages.map((m) => m.id), ...safeErrorFields(err) });
    for (const m of messages) m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
  };
  const deliveries = batch.messages.filter((m): m is Message<Extract<DeliveryMessage, { kind: "delivery" }>> => m.body.kind === "delivery");
  const mails = batch.messages.filter((m) => m.body.kind === "email");
  await Promise.all([
    (async () => {
      try {
        const outcomes = await processDeliveryBatch(
          deps,
          deliveries.map((m) => ({ ...m.body, messageId: m.id })),
        );
        await Promise.all(deliveries.map((m, i) => settle(m, outcomes[i]!)));
      } catch (err) {
        failed(deliveries, err);
      }
    })(),
    ...mails.map(async (message) => {
      try {
        const body = message.body as Extract<DeliveryMessage, { kind: "email" }>;
        await settle(
          message,
          await sendNotificationEmail({ db: deps.db, mail: deps.mail, clock: deps.clock, retrySeconds: deps.emailRetrySeconds }, body.notificationId),
        );
      } catch (err) {
        failed([message], err);
      }
    }),
  ]);
  for (const tenantId of failedFor) {
    try {
      await relayOutbox(deps, { now: deps.clock.now(), tenantId });
    } catch (err) {
      deps.log.error("relay after deliveries failed", { tenantId, ...safeErrorFields(err) });
    }
  }
}
