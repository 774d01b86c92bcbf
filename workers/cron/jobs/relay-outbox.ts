import { createDb } from "../../../db/create-db.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { requeueStalledDeliveries } from "../../../shared/webhooks/deliver.ts";
import { drainOutbox } from "../../../shared/webhooks/relay-outbox.ts";
import type { CronJob } from "../job.ts";

/**
 * The outbox relay's safety net (the api worker relays right after each
 * write): every event not yet relayed goes to the deliveries Queue, and
 * deliveries whose next attempt is long overdue are enqueued again.
 */
export const relayOutboxJob: CronJob = {
  name: "relay-outbox",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const db = createDb(env.DB);
    const queue = {
      send: async (body: Parameters<typeof env.WEBHOOK_DELIVERIES.send>[0], options?: { delaySeconds?: number }) =>
        void (await env.WEBHOOK_DELIVERIES.send(body, options)),
      sendBatch: async (messages: { body: Parameters<typeof env.WEBHOOK_DELIVERIES.send>[0]; delaySeconds?: number }[]) =>
        void (await env.WEBHOOK_DELIVERIES.sendBatch(messages)),
    };
    const relayed = await drainOutbox({ db, queue }, { now: systemClock.now() });
    const requeued = await requeueStalledDeliveries({ db, queue, clock: systemClock });
    if (relayed.events > 0 || requeued > 0) log.info("outbox relayed", { ...relayed, requeued });
  },
};
