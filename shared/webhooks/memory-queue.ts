import { type DeliveryAttempt, type DeliveryMessage, type DeliveryQueue, type EmailSend, itemsOf } from "./messages.ts";

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

/** What sent messages ask for, one entry per delivery attempt or e-mail (a `deliveries` message unbundled), with the message's delay. */
export function sentItems(messages: { body: DeliveryMessage; delaySeconds?: number }[]): { body: DeliveryAttempt | EmailSend; delaySeconds?: number }[] {
  return messages.flatMap((m) => itemsOf(m.body).map((body) => ({ body, delaySeconds: m.delaySeconds })));
}
