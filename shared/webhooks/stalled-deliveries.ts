import { and, eq, inArray, lt } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { notifications, webhookDeliveries } from "../../db/schema/webhooks.ts";
import type { DeliveryDeps } from "./deliver.ts";
import { bundledAttempts, type DeliveryMessage } from "./messages.ts";
import { slotWaitMs } from "./send-slots.ts";

/**
 * An attempt's claim is a lease of the longest an attempt can take (its wait
 * for a request slot, then the delivery timeout) plus this margin: a claimed
 * attempt unfinished after it was interrupted (its worker died; its request,
 * if it went out, was aborted at the timeout), so the next attempt may go
 * without ever running in parallel with it. The same lease bounds how long a
 * message may be missing before the recovery pass re-sends it.
 */
export const LEASE_MARGIN_MS = 5_000;

/**
 * How long a claimed attempt or a queued message may go without an outcome:
 * 30 s with the 10 s timeout (15 s for a slot, 10 s for the answer, 5 s).
 */
export const deliveryLeaseMs = (timeoutMs: number) => slotWaitMs(timeoutMs) + timeoutMs + LEASE_MARGIN_MS;

/** Stalled work re-sent per recovery pass, at most. */
export const RECOVERY_PAGE = 100;

/**
 * Takes up to RECOVERY_PAGE PENDING deliveries due before `cutoff`, renewing
 * their lease to `now`. They are found through the partial
 * `webhook_deliveries_pending_idx`, which holds PENDING deliveries only.
 */
export function requeueDeliveriesQuery(db: Db, now: Date, cutoff: Date) {
  const stalled = and(eq(webhookDeliveries.status, "PENDING"), lt(webhookDeliveries.nextAttemptAt, cutoff));
  return db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(and(inArray(webhookDeliveries.id, db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(stalled).limit(RECOVERY_PAGE)), stalled))
    .returning({ id: webhookDeliveries.id, attemptCount: webhookDeliveries.attemptCount });
}

/** The same for owner e-mails, through the partial `notifications_email_pending_idx`. */
export function requeueMailsQuery(db: Db, now: Date, cutoff: Date) {
  const stalled = and(eq(notifications.emailStatus, "PENDING"), lt(notifications.emailNextAttemptAt, cutoff));
  return db
    .update(notifications)
    .set({ emailNextAttemptAt: now })
    .where(and(inArray(notifications.id, db.select({ id: notifications.id }).from(notifications).where(stalled).limit(RECOVERY_PAGE)), stalled))
    .returning({ id: notifications.id });
}

/**
 * The recovery pass (every cron tick): work whose Queue message was lost (a
 * relay or a worker cut off, a message dropped, the process killed) is
 * enqueued again once its lease has run out: deliveries whose next attempt is
 * overdue by more than `leaseMs`, and owner e-mails likewise. Each is taken
 * with a conditional update that renews its lease (`next_attempt_at` = now),
 * so overlapping passes send one message each, and a delivery is re-sent at
 * most once per lease. A re-sent attempt whose claim is still held waits for
 * it, and one whose claim outlived its lease counts as interrupted: no
 * attempt ever runs twice, or twice at once. Duplicates are harmless.
 */
export async function requeueStalledDeliveries(deps: Pick<DeliveryDeps, "db" | "queue" | "clock">, leaseMs = deliveryLeaseMs(10_000)) {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - leaseMs);
  const [stalled, mails] = await Promise.all([requeueDeliveriesQuery(deps.db, now, cutoff), requeueMailsQuery(deps.db, now, cutoff)]);
  const messages: { body: DeliveryMessage }[] = [
    ...bundledAttempts(stalled.map((s) => ({ kind: "delivery" as const, deliveryId: s.id, attempt: s.attemptCount + 1 }))),
    ...mails.map((n) => ({ body: { kind: "email" as const, notificationId: n.id } })),
  ];
  for (let i = 0; i < messages.length; i += 100) await deps.queue.sendBatch(messages.slice(i, i + 100));
  return stalled.length + mails.length;
}
