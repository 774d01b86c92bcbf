import type { DeliveryMessage, DeliveryQueue } from "./messages.ts";

/** A queue that keeps what is sent, for the Bun tier; tests drain it by hand. */
export function memoryDeliveryQueue(): DeliveryQueue & { messages: { body: DeliveryMessage; delaySeconds?: number }[] } {
  const messages: { body: DeliveryMessage; delaySeconds?: number }[] = [];
  return {
    messages,
    async send(body, options) {
      messages.push({ body, delaySeconds: options?.delaySeconds });
    },
    async sendBatch(batch) {
      messages.push(...batch);
    },
  };
}
