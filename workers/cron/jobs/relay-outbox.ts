import { createDb } from "../../../db/create-db.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import { deliveryLeaseMs, requeueStalledDeliveries } from "../../../shared/webhooks/deliver.ts";
import { drainOutbox } from "../../../shared/webhooks/relay-outbox.ts";
import type { CronJob } from "../job.ts";

/**
 * The outbox relay's safety net (the api worker relays right after each
 * write): every event not yet relayed goes to the deliveries Queue. Then the
 * recovery pass: deliveries and e-mails whose message was lost (a worker or
 * the whole stack killed, a message dropped) are enqueued again once their
 * lease (the delivery timeout plus 5 s) has run out, so a restart is
 * recovered on the next tick, not minutes later.
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
    const requeued = await requeueStalledDeliveries({ db, queue, clock: systemClock }, deliveryLeaseMs(Number(env.WEBHOOK_TIMEOUT_MS ?? 10_000)));
    if (relayed.events > 0 || requeued > 0) log.info("outbox relayed", { ...relayed, requeued });
  },
};
