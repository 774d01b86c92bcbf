import { chunk } from "../../db/chunks.ts";

/** Attempt `attempt` (1..3) of a webhook delivery. */
export type DeliveryAttempt = { kind: "delivery"; deliveryId: string; attempt: number };
/** Send (or retry) the owner e-mail of a notification. */
export type EmailSend = { kind: "email"; notificationId: string };

/**
 * Messages on the deliveries Queue (`svc-credit-webhook-deliveries`), defined
 * once: the api and cron workers produce them, the webhooks worker consumes.
 * Each names work by id; the database holds the truth, so a duplicate or
 * stale message is recognized and dropped.
 *
 * A `deliveries` message carries up to `BUNDLE_ATTEMPTS` first attempts at
 * once: the relay and the recovery pass send their deliveries that way
 * (`bundledAttempts`), so a page of events costs a few Queue messages
 * rather than one per delivery. Each attempt in it is handled exactly as if
 * it had come alone (its claim id is derived from the message id and the
 * delivery, deliver.ts), and a retry of the message repeats only what had
 * not been recorded. Retries of an attempt, redeliveries and e-mails go one
 * per message.
 */
export type DeliveryMessage = DeliveryAttempt | EmailSend | { kind: "deliveries"; attempts: DeliveryAttempt[] };

/**
 * Attempts per `deliveries` message. The consumer takes at most
 * `max_batch_size` (50) messages a batch, so one invocation sends at most
 * 500 requests (and a few D1 round trips per 50 of them, deliver.ts), well
 * within a Worker invocation's subrequests; e-mails stay one per message, so
 * a batch of them stays at 50 sends.
 */
export const BUNDLE_ATTEMPTS = 10;

/** What a message asks for, one item per delivery attempt or e-mail. */
export function itemsOf(message: DeliveryMessage): (DeliveryAttempt | EmailSend)[] {
  return message.kind === "deliveries" ? message.attempts : [message];
}

/** Attempts as Queue messages: one `deliveries` message per `BUNDLE_ATTEMPTS`, a lone attempt as itself. */
export function bundledAttempts(attempts: DeliveryAttempt[]): { body: DeliveryMessage }[] {
  return chunk(attempts, BUNDLE_ATTEMPTS).map((part) => ({ body: part.length === 1 ? part[0]! : { kind: "deliveries", attempts: part } }));
}

/** The producer side, which a Queue binding satisfies. */
export interface DeliveryQueue {
  send(message: DeliveryMessage, options?: { delaySeconds?: number }): Promise<void>;
  sendBatch(messages: { body: DeliveryMessage; delaySeconds?: number }[]): Promise<void>;
}

export const MAX_ATTEMPTS = 3;
