import { inArray } from "drizzle-orm";
import { chunk, IDS_PER_LIST } from "../../db/chunks.ts";
import type { Db } from "../../db/create-db.ts";
import { notifications, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { type Logger, safeErrorFields } from "../../shared/observability/logger.ts";
import { type DeliveryMessage, itemsOf } from "../../shared/webhooks/messages.ts";
import { retryDelaySeconds } from "./consume-deliveries.ts";

/** The deliveries queue's dead-letter queue (workers/webhooks/wrangler.toml; the deploy check expects this name). */
export const DELIVERIES_DLQ = "svc-credit-webhook-deliveries-dlq";

/**
 * The dead-letter queue's consumer. A message lands here after its Queue
 * retries ran out (D1 overloaded for minutes, or a bug); the message is only
 * a pointer: the delivery row (and the notification's e-mail columns) in D1
 * is the truth, and it is still PENDING with its next attempt due, so the
 * cron's recovery pass (requeueStalledDeliveries, every tick) re-sends it
 * once that is a lease overdue, with its attempt count untouched. Nothing is
 * lost, but nothing here is silent either: each dead letter is logged at
 * error level with its delivery's or e-mail's state from D1. A message that
 * ended (SUCCEEDED, FAILED, SENT, SKIPPED) meanwhile is logged as such. The
 * messages are not sent back to the deliveries queue: a message that keeps
 * failing would circle for ever, where the recovery pass re-sends a stalled
 * delivery at most once per lease.
 */
export async function consumeDeadLetters(batch: MessageBatch<DeliveryMessage>, deps: { db: Db; log: Logger }): Promise<void> {
  const items = batch.messages.flatMap((message) => itemsOf(message.body).map((item) => ({ message, item })));
  const deliveryIds = items.flatMap(({ item }) => (item.kind === "delivery" ? [item.deliveryId] : []));
  const notificationIds = items.flatMap(({ item }) => (item.kind === "email" ? [item.notificationId] : []));
  try {
    // A bundle brings up to 10 ids: the lists are read in parts that fit D1's parameters.
    const [deliveries, mails] = await Promise.all([
      Promise.all(
        chunk(deliveryIds, IDS_PER_LIST).map((ids) =>
          deps.db
            .select({
              id: webhookDeliveries.id,
              tenantId: webhookDeliveries.tenantId,
              status: webhookDeliveries.status,
              attemptCount: webhookDeliveries.attemptCount,
              nextAttemptAt: webhookDeliveries.nextAttemptAt,
            })
            .from(webhookDeliveries)
            .where(inArray(webhookDeliveries.id, ids)),
        ),
      ),
      Promise.all(
        chunk(notificationIds, IDS_PER_LIST).map((ids) =>
          deps.db
            .select({
              id: notifications.id,
              tenantId: notifications.tenantId,
              status: notifications.emailStatus,
              attemptCount: notifications.emailAttempts,
              nextAttemptAt: notifications.emailNextAttemptAt,
            })
            .from(notifications)
            .where(inArray(notifications.id, ids)),
        ),
      ),
    ]);
    const state = new Map([...deliveries.flat(), ...mails.flat()].map((r) => [r.id, r]));
    // One line per delivery or e-mail, each with the message it came in.
    for (const { message: m, item } of items) {
      const id = item.kind === "delivery" ? item.deliveryId : item.notificationId;
      const row = state.get(id);
      deps.log.error("dead-lettered delivery message", {
        queue: batch.queue,
        messageId: m.id,
        kind: item.kind,
        id,
        tenantId: row?.tenantId,
        status: row?.status ?? "missing",
        attemptCount: row?.attemptCount,
        nextAttemptAt: row?.nextAttemptAt?.toISOString() ?? null,
        recovery: row?.status === "PENDING" ? "the cron recovery pass re-sends it once overdue" : "none needed",
      });
    }
    for (const m of batch.messages) m.ack();
  } catch (err) {
    // The row stays PENDING whatever happens here (the recovery pass covers it); this retry is for the log line's state.
    deps.log.error("dead letters not read", { queue: batch.queue, messageIds: batch.messages.map((m) => m.id), ...safeErrorFields(err) });
    for (const m of batch.messages) m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
  }
}
