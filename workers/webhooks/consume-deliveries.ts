import { chunk } from "../../db/chunks.ts";
import { safeErrorFields } from "../../shared/observability/logger.ts";
import { sendNotificationEmail } from "../../shared/notifications/send-notification-email.ts";
import { type MessageOutcome, PartlyRecordedError, processDeliveryBatch } from "../../shared/webhooks/deliver.ts";
import { type DeliveryAttempt, type DeliveryMessage, type EmailSend, itemsOf } from "../../shared/webhooks/messages.ts";
import { sendSlots, slotWaitMs, slowAfterMs } from "../../shared/webhooks/send-slots.ts";
import { relayOutbox } from "../../shared/webhooks/relay-outbox.ts";
import type { webhookDepsFromEnv } from "./deps.ts";

type Deps = ReturnType<typeof webhookDepsFromEnv>;

/**
 * The Queue retry's delay after the `attempts`-th failed try of a message:
 * 5, 20, 80 s. With max_retries = 3 a message rides out about 2 minutes of
 * an overloaded database before it is dead-lettered.
 */
export const retryDelaySeconds = (attempts: number) => Math.min(300, 5 * 4 ** Math.max(0, attempts - 1));

/** Delivery attempts handled together (one processDeliveryBatch): a batch of single messages, as before bundles. */
export const DELIVERIES_PER_PASS = 50;

/** The owner e-mails' share of the request slots: they go out as one "tenant" of their own. */
const MAIL_SLOTS = { tenantId: "owner e-mail", endpointId: "owner e-mail" };

/**
 * The deliveries Queue consumer. The batch's webhook delivery attempts (a
 * `deliveries` message brings up to 10, messages.ts) are handled together,
 * in parts of 50, all parts at once (processDeliveryBatch: a few D1 round
 * trips for the 50); each owner e-mail on its own. Every request of the
 * invocation, deliveries and e-mails, goes out through one set of slots
 * (send-slots.ts): six at a time, as Cloudflare allows, shared fairly
 * between tenants, so a part waiting on a slow endpoint holds up no other
 * part, and a request's timeout runs only once it is sent. A "not yet"
 * outcome re-sends its item alone with its delay (rather than `retry()`,
 * which would spend the Queue's own retry budget); an error (D1 overloaded,
 * most often) retries the messages it concerns, whole, with a growing delay
 * (retryDelaySeconds), and only once every item of the batch ran. Such a
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
  /** The messages whose work (or part of it) failed: retried whole once everything ran; the rest are acked. */
  const erred = new Set<Message<DeliveryMessage>>();
  const settle = async (item: DeliveryAttempt | EmailSend, outcome: MessageOutcome) => {
    // "Not yet": the item alone, again, with its delay (a bundle's other items are done).
    if (!outcome.ack) await deps.queue.send(item, { delaySeconds: outcome.retryInSeconds });
    else if ("failedForTenant" in outcome && outcome.failedForTenant) failedFor.add(outcome.failedForTenant);
  };
  const failed = (messages: Message<DeliveryMessage>[], err: unknown) => {
    deps.log.error("delivery messages failed", { messageIds: [...new Set(messages.map((m) => m.id))], ...safeErrorFields(err) });
    for (const m of messages) erred.add(m);
  };
  // Every item with the message it came in (a `deliveries` message brings several).
  const items = batch.messages.flatMap((message) => itemsOf(message.body).map((item) => ({ message, item })));
  const deliveries = items.filter((d): d is { message: Message<DeliveryMessage>; item: DeliveryAttempt } => d.item.kind === "delivery");
  const mails = items.filter((d): d is { message: Message<DeliveryMessage>; item: EmailSend } => d.item.kind === "email");
  // A kind this worker does not know (a newer producer deployed first, README "Deploy"): said, then acked; the
  // recovery pass re-sends its PENDING work one lease later.
  for (const { message, item } of items) {
    if (item.kind !== "delivery" && item.kind !== "email")
      deps.log.error("unknown delivery message", { messageId: message.id, kind: String((item as { kind?: unknown }).kind) });
  }
  // This invocation's requests: six out at a time, shared between tenants (send-slots.ts).
  const slots = sendSlots({ waitMs: slotWaitMs(deps.timeoutMs), slowAfterMs: slowAfterMs(deps.timeoutMs) });
  await Promise.all([
    // Parts of 50 attempts, each one processDeliveryBatch (its reads and writes are sized for that), all at once:
    // their requests queue for the same slots, so a part waiting on a slow endpoint holds up no other.
    ...chunk(deliveries, DELIVERIES_PER_PASS).map(async (part) => {
      try {
        const outcomes = await processDeliveryBatch(
          { ...deps, slots },
          part.map(({ message, item }) => ({ ...item, messageId: message.id })),
        );
        await Promise.all(part.map(({ item }, i) => settle(item, outcomes[i]!)));
      } catch (err) {
        // Recorded in part: a final failure among what was recorded is relayed now, as if the part had been recorded whole.
        if (err instanceof PartlyRecordedError) for (const tenantId of err.failedForTenants) failedFor.add(tenantId);
        failed(
          part.map((d) => d.message),
          err instanceof PartlyRecordedError ? err.cause : err,
        );
      }
    }),
    ...mails.map(async ({ message, item }) => {
      try {
        // An e-mail waits for its slot as long as it takes (the provider's own timeout bounds each send).
        const slot = (await slots.take(MAIL_SLOTS, Number.POSITIVE_INFINITY))!;
        let answered = false;
        let outcome: MessageOutcome;
        try {
          outcome = await sendNotificationEmail({ db: deps.db, mail: deps.mail, clock: deps.clock, retrySeconds: deps.emailRetrySeconds }, item.notificationId);
          answered = true;
        } finally {
          slot.done({ answered });
        }
        await settle(item, outcome);
      } catch (err) {
        failed([message], err);
      }
    }),
  ]);
  // A retried message repeats only what was not recorded: its recorded attempts and sent e-mails are recognized and dropped.
  for (const m of batch.messages) {
    if (erred.has(m)) m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
    else m.ack();
  }
  for (const tenantId of failedFor) {
    try {
      await relayOutbox(deps, { now: deps.clock.now(), tenantId });
    } catch (err) {
      deps.log.error("relay after deliveries failed", { tenantId, ...safeErrorFields(err) });
    }
  }
}
