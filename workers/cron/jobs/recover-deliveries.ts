import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { deliveryLeaseMs, RECOVERY_PAGE, requeueStalledDeliveries } from "../../../shared/webhooks/stalled-deliveries.ts";
import type { CronJob } from "../job.ts";
import { deliveryQueueOf } from "./relay-outbox.ts";

/**
 * The recovery pass: deliveries and e-mails whose message was lost (a worker
 * or the whole stack killed, a message dropped or dead-lettered) are enqueued
 * again once their lease (the delivery timeout plus 5 s) has run out, so a
 * restart is recovered on the next tick, not minutes later. One page of each
 * a run (RECOVERY_PAGE); a full page is continued (budget.ts).
 */
export const recoverDeliveriesJob: CronJob = {
  name: "recover-deliveries",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const requeued = await requeueStalledDeliveries(
      { db: createDb(tenantDatabase(env)), queue: deliveryQueueOf(env), clock: systemClock },
      deliveryLeaseMs(Number(env.WEBHOOK_TIMEOUT_MS ?? 10_000)),
    );
    if (requeued > 0) log.info("stalled deliveries requeued", { requeued });
    return { more: requeued >= RECOVERY_PAGE };
  },
};
