/**
 * The deliveries queue consumer. For now it acknowledges every message and
 * logs its id; signing, delivering, recording and retrying come with the
 * webhook issue (the message type will be defined once in shared/webhooks).
 */
export async function consumeDeliveries(batch: MessageBatch<unknown>): Promise<void> {
  for (const message of batch.messages) {
    console.log(JSON.stringify({ level: "info", msg: "webhook delivery received", queue: batch.queue, messageId: message.id, attempts: message.attempts }));
    message.ack();
  }
}
