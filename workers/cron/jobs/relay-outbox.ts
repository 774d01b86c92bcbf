import { createDb } from "../../../db/create-db.ts";
import { tenantDatabase } from "../../../db/databases.ts";
import { systemClock } from "../../../shared/domain/clock.ts";
import type { DeliveryQueue } from "../../../shared/webhooks/messages.ts";
import { drainOutbox } from "../../../shared/webhooks/relay-outbox.ts";
import { RELAY_PAGES_PER_RUN } from "../budget.ts";
import type { CronEnv } from "../env.ts";
import type { CronJob } from "../job.ts";

/** The deliveries Queue binding as the relay's producer port. */
export const deliveryQueueOf = (env: CronEnv): DeliveryQueue => ({
  send: async (body, options) => void (await env.WEBHOOK_DELIVERIES.send(body, options)),
  sendBatch: async (messages) => void (await env.WEBHOOK_DELIVERIES.sendBatch(messages)),
});

/**
 * The outbox relay's safety net (the api worker relays right after each
 * write): every event not yet relayed goes to the deliveries Queue, at most
 * RELAY_PAGES_PER_RUN pages a run; a run that stops there is continued
 * (budget.ts). The recovery pass is a job of its own (recover-deliveries.ts).
 */
export const relayOutboxJob: CronJob = {
  name: "relay-outbox",
  crons: ["* * * * *"],
  async run({ env, log }) {
    const relayed = await drainOutbox(
      { db: createDb(tenantDatabase(env)), queue: deliveryQueueOf(env) },
      { now: systemClock.now(), maxPages: RELAY_PAGES_PER_RUN },
    );
    if (relayed.events > 0) log.info("outbox relayed", relayed);
    return { more: relayed.more };
  },
};
