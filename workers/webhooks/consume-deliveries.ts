/**
 * The deliveries queue consumer. For now it acknowledges every message and
 * logs its id; signing, delivering, recording and retrying come with the
 * webhook issue (the message type will be defined once in shared/webhooks).
 */
import { consoleLogger } from "../../shared/observability/logger.ts";

export async function consumeDeliveries(batch: MessageBatch<unknown>): Promise<void> {
  for (const message of batch.messages) {
    consoleLogger.info("webhook delivery received", { queue: batch.queue, messageId: message.id, attempts: message.attempts });
    message.ack();
  }
}
