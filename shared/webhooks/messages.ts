/**
 * Messages on the deliveries Queue (`svc-credit-webhook-deliveries`), defined
 * once: the api and cron workers produce them, the webhooks worker consumes.
 * Each names work by id; the database holds the truth, so a duplicate or
 * stale message is recognized and dropped.
 */
export type DeliveryMessage =
  /** Attempt `attempt` (1..3) of a webhook delivery. */
  | { kind: "delivery"; deliveryId: string; attempt: number }
  /** Send (or retry) the owner e-mail of a notification. */
  | { kind: "email"; notificationId: string };

/** The producer side, which a Queue binding satisfies. */
export interface DeliveryQueue {
  send(message: DeliveryMessage, options?: { delaySeconds?: number }): Promise<void>;
  sendBatch(messages: { body: DeliveryMessage; delaySeconds?: number }[]): Promise<void>;
}

export const MAX_ATTEMPTS = 3;
