import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, inArray } from "drizzle-orm";
import { chunk } from "../../db/chunks.ts";
import { createDb } from "../../db/create-db.ts";
import { events } from "../../db/schema/events.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import type { D1FaultPolicy } from "../../shared/chaos/faults.ts";
import { DEV_SECRETS_KEY, sealSecret } from "../../shared/crypto/secret-box.ts";
import { fixedClock } from "../../shared/domain/clock.ts";
import { newId } from "../../shared/domain/ids.ts";
import { isTransientError } from "../../shared/http/transient-errors.ts";
import type { Logger } from "../../shared/observability/logger.ts";
import { createKey, createSandboxLoan, insertWebhookEndpoint, signUpTenant } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { OVERLOADED, overloadedLibsql } from "../../shared/testing/overloaded-libsql.ts";
import { type DeliveryMessage, itemsOf } from "../../shared/webhooks/messages.ts";
import { memoryDeliveryQueue } from "../../shared/webhooks/memory-queue.ts";
import { generateWebhookSecret } from "../../shared/webhooks/signing.ts";
import { failingBatch } from "../../shared/testing/failing-batch.ts";
import { consumeDeadLetters, DELIVERIES_DLQ } from "./consume-dead-letters.ts";
import { consumeDeliveries, retryDelaySeconds } from "./consume-deliveries.ts";
import { deferredSeconds } from "../../shared/webhooks/attempt-records.ts";
import type { webhookDepsFromEnv } from "./deps.ts";

// Issue 17: D1 answering "overloaded" during a delivery's bookkeeping (its claim, the record of its
// outcome) is retried, in place and then by the Queue with a backoff, without spending one of the
// delivery's 3 attempts; a message that runs out of Queue retries is dead-lettered, not lost.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Sent = { id: string; body: DeliveryMessage; attempts: number };

/**
 * A tenant with one endpoint and an ACTIVE loan (three events relayed), and
 * a Queue that works as the platform's: a message retried comes back with
 * the same id and `attempts` + 1; after max_retries (3) it goes to the
 * dead-letter list; what the consumer sends is a new message.
 */
async function setup(answer: () => Response | Promise<Response>, dbFaults?: D1FaultPolicy) {
  const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
  queue.messages.length = 0;
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  await insertWebhookEndpoint(t, owner.tenantId, "https://hooks.merchant.example/overloaded");
  expect((await createSandboxLoan(t, key)).status).toBe("ACTIVE");
  const ids = (await t.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, owner.tenantId))).map((d) => d.id);
  expect(ids).toHaveLength(3);
  const requests: { deliveryId: string; attempt: string }[] = [];
  const errors: string[] = [];
  const log: Logger = { info: () => undefined, error: (msg, f) => errors.push(`${msg} ${JSON.stringify(f)}`) };
  const outbound = memoryDeliveryQueue();
  const deps = {
    db: dbFaults ? createDb(overloadedLibsql(t.client, dbFaults)) : t.db,
    queue: outbound,
    clock: fixedClock(t.clock.now()),
    fetch: async (_url: string, init: RequestInit) => {
      const h = new Headers(init.headers as Record<string, string>);
      requests.push({ deliveryId: h.get("x-svc-delivery")!, attempt: h.get("x-svc-attempt")! });
      return answer();
    },
    secretsKey: DEV_SECRETS_KEY,
    timeoutMs: 1_000,
    retryDelaysSeconds: [0, 0],
    log,
    mail: { send: async () => ({ ok: true as const }) },
    emailRetrySeconds: [0, 0],
  } as unknown as ReturnType<typeof webhookDepsFromEnv>;

  // The relay's messages as they are: the loan's 3 first attempts in one `deliveries` message.
  let pending: Sent[] = queue.messages.flatMap((m) => (m.body.kind !== "email" ? [{ id: newId(), body: m.body, attempts: 1 }] : []));
  const deadLetters: Sent[] = [];
  const retryDelays: number[] = [];
  /** Runs the consumer over what is queued (delays skipped) until nothing is left, each message in a batch of its own. */
  async function pump() {
    for (let round = 0; round < 50 && pending.length > 0; round++) {
      const next: Sent[] = [];
      for (const sent of pending) {
        let settled: "ack" | "retry" | undefined;
        const message = {
          id: sent.id,
          timestamp: new Date(),
          body: sent.body,
          attempts: sent.attempts,
          ack: () => {
            settled ??= "ack";
          },
          retry: (o?: { delaySeconds?: number }) => {
            settled ??= "retry";
            retryDelays.push(o?.delaySeconds ?? 0);
          },
        };
        const batch = { queue: "svc-credit-webhook-deliveries", messages: [message], ackAll() {}, retryAll() {} };
        await consumeDeliveries(batch as unknown as MessageBatch<DeliveryMessage>, deps);
        if (settled === "retry") (sent.attempts >= 4 ? deadLetters : next).push({ ...sent, attempts: sent.attempts + 1 });
      }
      next.push(...outbound.messages.splice(0).map((m) => ({ id: newId(), body: m.body, attempts: 1 })));
      pending = next;
    }
  }
  const attemptsOf = async () =>
    (await t.db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, ids)))
      .map((a) => `${a.deliveryId}:${a.attempt}:${a.succeeded}`)
      .sort();
  const deliveries = async () => (await t.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, ids))).map((d) => [d.status, d.attemptCount]);
  return { ids, requests, errors, deadLetters, retryDelays, pump, attemptsOf, deliveries, deps };
}

describe("D1 overloaded during a delivery's bookkeeping spends none of its 3 attempts", () => {
  test("the error is D1's overloaded error, which counts as transient", () => {
    expect(isTransientError(new Error(OVERLOADED))).toBe(true);
  });

  test("a claim committed but unconfirmed (its read-back overloaded too) is resumed by the Queue's retry: delivered with attempt 1", async () => {
    // The claim commits and its answer is lost, then all 3 read-backs fail: the consumer hands the message back to the Queue.
    const s = await setup(() => new Response("ok"), { rate: 1, when: "after", match: '"webhook_attempts"', limit: 4 });
    await s.pump();
    expect(s.retryDelays).toEqual([5]);
    expect(await s.deliveries()).toEqual([
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
    ]);
    expect(await s.attemptsOf()).toEqual(s.ids.map((id) => `${id}:1:true`).sort());
    expect(s.requests.every((r) => r.attempt === "1")).toBe(true);
    expect(s.requests).toHaveLength(3);
    expect(s.deadLetters).toEqual([]);
  });

  test("a claim that did not run (overloaded before it) is tried again, not dropped", async () => {
    const s = await setup(() => new Response("ok"), { rate: 1, when: "before", match: 'insert into "webhook_attempts"', limit: 1 });
    await s.pump();
    expect(await s.deliveries()).toEqual([
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
    ]);
    expect(s.requests).toHaveLength(3);
  });

  test("an outcome whose record stays overloaded past the in-place tries: the Queue retries, the attempt is sent again as attempt 1 and recorded once", async () => {
    // recordPersistently tries 5 times; the sixth (the Queue's retry) gets through.
    const s = await setup(() => new Response("ok"), { rate: 1, when: "before", match: 'update "webhook_attempts"', limit: 5 });
    await s.pump();
    expect(s.retryDelays).toEqual([5]);
    expect(await s.deliveries()).toEqual([
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
    ]);
    expect(await s.attemptsOf()).toEqual(s.ids.map((id) => `${id}:1:true`).sort());
    // The 3 attempts came in one message, whose record failed: one duplicate request each, of
    // attempt 1 (receivers deduplicate on the event id); never an attempt 2.
    expect(s.requests).toHaveLength(6);
    for (const id of s.ids)
      expect(s.requests.filter((r) => r.deliveryId === id)).toEqual([
        { deliveryId: id, attempt: "1" },
        { deliveryId: id, attempt: "1" },
      ]);
  });

  test("a failing endpoint under an overloaded database fails after exactly 3 real attempts", async () => {
    const s = await setup(() => new Response("down", { status: 503 }), { rate: 0.3, match: '"webhook_(attempts|deliveries)"', seed: 17, limit: 12 });
    await s.pump();
    expect(s.retryDelays.length).toBeGreaterThan(0);
    expect(await s.deliveries()).toEqual([
      ["FAILED", 3],
      ["FAILED", 3],
      ["FAILED", 3],
    ]);
    expect(await s.attemptsOf()).toEqual(s.ids.flatMap((id) => [1, 2, 3].map((n) => `${id}:${n}:false`)).sort());
    expect(s.deadLetters).toEqual([]);
  });

  test("the Queue's retries back off: 5, 20, 80 s", () => {
    expect([1, 2, 3].map(retryDelaySeconds)).toEqual([5, 20, 80]);
  });
});

describe("deliveries messages (up to 10 first attempts each)", () => {
  test("each attempt is handled as if it came alone: one batch holding a bundle, a copy of it, the same attempts alone and 60 unknown ones sends each delivery once and acks every message", async () => {
    const s = await setup(() => new Response("ok"));
    const first = (deliveryId: string) => ({ kind: "delivery" as const, deliveryId, attempt: 1 });
    const bundle: DeliveryMessage = { kind: "deliveries", attempts: s.ids.map(first) };
    const unknown = Array.from({ length: 6 }, (): DeliveryMessage => ({ kind: "deliveries", attempts: Array.from({ length: 10 }, () => first(newId())) }));
    const settled = new Map<string, string>();
    const messages = [bundle, bundle, ...s.ids.map(first), ...unknown].map((body) => {
      const id = newId();
      return { id, timestamp: new Date(), body, attempts: 1, ack: () => settled.set(id, "ack"), retry: () => settled.set(id, "retry") };
    });
    // 69 attempts in one batch: handled 50 at a time.
    expect(messages.flatMap((m) => itemsOf(m.body))).toHaveLength(69);
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages } as unknown as MessageBatch<DeliveryMessage>, s.deps);
    expect([...settled.values()]).toEqual(messages.map(() => "ack"));
    expect(s.requests.map((r) => r.deliveryId).sort()).toEqual([...s.ids].sort());
    expect(await s.deliveries()).toEqual([
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
    ]);
    expect(s.errors).toEqual([]);
  });

  test("parts of 50 attempts go all at once: a part waiting on a request holds up no other part", async () => {
    let inFlight = 0;
    let most = 0;
    let release: () => void = () => undefined;
    const allSent = new Promise<void>((resolve) => {
      release = resolve;
    });
    const s = await setup(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      if (inFlight === 3) release();
      // Held until every part's request is in flight (or 3 s, so a consumer that holds parts back fails the test rather than hang).
      await Promise.race([allSent, Bun.sleep(3_000)]);
      inFlight--;
      return new Response("ok");
    });
    const first = (deliveryId: string) => ({ kind: "delivery" as const, deliveryId, attempt: 1 });
    const unknown = () => Array.from({ length: 49 }, () => first(newId()));
    // Items in order: part 1 = [d0, 49 unknown], part 2 = [d1, 49 unknown], part 3 = [d2].
    const attempts = [first(s.ids[0]!), ...unknown(), first(s.ids[1]!), ...unknown(), first(s.ids[2]!)];
    const messages = chunk(attempts, 10).map((part) => ({
      id: newId(),
      timestamp: new Date(),
      body: { kind: "deliveries", attempts: part } as DeliveryMessage,
      attempts: 1,
      ack: () => undefined,
      retry: () => undefined,
    }));
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages } as unknown as MessageBatch<DeliveryMessage>, s.deps);
    expect(most).toBe(3);
    expect(s.requests.map((r) => r.deliveryId).sort()).toEqual([...s.ids].sort());
  });

  test("an attempt of a bundle to retry later goes again alone, with its delay; the bundle is acked", async () => {
    const s = await setup(() => new Response("down", { status: 503 }));
    const settled: string[] = [];
    const outbound = s.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
    const body: DeliveryMessage = { kind: "deliveries", attempts: s.ids.map((deliveryId) => ({ kind: "delivery" as const, deliveryId, attempt: 1 })) };
    const message = { id: newId(), timestamp: new Date(), body, attempts: 1, ack: () => settled.push("ack"), retry: () => settled.push("retry") };
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages: [message] } as unknown as MessageBatch<DeliveryMessage>, s.deps);
    expect(settled).toEqual(["ack"]);
    expect(outbound.messages.map((m) => m.body).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      [...s.ids].sort().map((deliveryId) => ({ kind: "delivery", deliveryId, attempt: 2 })),
    );
    expect(outbound.messages.every((m) => m.delaySeconds === 0)).toBe(true); // retryDelaysSeconds [0, 0] in this setup
  });
});

describe("six requests at a time, shared between tenants (send-slots.ts)", () => {
  test("another tenant's endpoints that never answer: this tenant's deliveries still succeed at their first attempt; what got no slot in time is deferred, not failed, and goes out later as attempt 1", async () => {
    const healthy = await setup(() => new Response("ok"));
    const dead = await setup(() => new Response("ok"));
    // The dead tenant: 9 more endpoints for its 3 events, so 30 first attempts, each endpoint its own.
    const [one] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, dead.ids[0]!));
    const events = await t.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, dead.ids));
    const deadIds = [...dead.ids];
    for (let e = 0; e < 9; e++) {
      const secret = generateWebhookSecret();
      const endpointId = newId();
      await t.db.insert(webhookEndpoints).values({
        id: endpointId,
        tenantId: one!.tenantId,
        url: `https://dead-${e}.merchant.example/hook`,
        events: ["*"],
        secretCiphertext: await sealSecret(secret, DEV_SECRETS_KEY),
        secretPrefix: secret.slice(0, 12),
        createdAt: new Date(),
      });
      for (const ev of events) {
        const id = newId();
        deadIds.push(id);
        await t.db.insert(webhookDeliveries).values({ ...ev, id, endpointId });
      }
    }
    const deadSet = new Set(deadIds);
    let inFlight = 0;
    let most = 0;
    let endpointsAnswer = false;
    const seen: { deliveryId: string; tenant: "healthy" | "dead"; aborted: boolean }[] = [];
    const outbound = memoryDeliveryQueue();
    const deps = {
      ...healthy.deps,
      queue: outbound,
      timeoutMs: 300,
      fetch: async (_url: string, init: RequestInit) => {
        const deliveryId = new Headers(init.headers as Record<string, string>).get("x-svc-delivery")!;
        const seenAs = { deliveryId, tenant: deadSet.has(deliveryId) ? ("dead" as const) : ("healthy" as const), aborted: false };
        seen.push(seenAs);
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          if (seenAs.tenant === "healthy" || endpointsAnswer) return new Response("ok");
          // Never answers: only the request's own timeout ends it.
          return await new Promise<Response>((_, reject) =>
            init.signal!.addEventListener("abort", () => {
              seenAs.aborted = true;
              reject(init.signal!.reason);
            }),
          );
        } finally {
          inFlight--;
        }
      },
    } as typeof healthy.deps;
    const first = (deliveryId: string) => ({ kind: "delivery" as const, deliveryId, attempt: 1 });
    const settled: string[] = [];
    // The dead tenant's attempts first, the healthy tenant's last.
    const messages = chunk([...deadIds, ...healthy.ids].map(first), 10).map((part) => ({
      id: newId(),
      timestamp: new Date(),
      body: { kind: "deliveries", attempts: part } as DeliveryMessage,
      attempts: 1,
      ack: () => settled.push("ack"),
      retry: () => settled.push("retry"),
    }));
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages } as unknown as MessageBatch<DeliveryMessage>, deps);

    expect(settled).toEqual(messages.map(() => "ack"));
    expect(most).toBeLessThanOrEqual(6);
    expect(await healthy.deliveries()).toEqual(Array(3).fill(["SUCCEEDED", 1]));
    expect(seen.filter((r) => r.tenant === "healthy").every((r) => !r.aborted)).toBe(true);
    // The dead tenant: what was sent timed out (attempt 1 recorded, attempt 2 queued); the rest waited more than
    // 1.5 timeouts for a slot and was deferred: no attempt, its claim released, sent again alone 10 s later.
    const sentDead = new Set(seen.filter((r) => r.tenant === "dead").map((r) => r.deliveryId));
    expect(sentDead.size).toBeGreaterThan(0);
    expect(sentDead.size).toBeLessThanOrEqual(12); // two rounds of 300 ms fit in the 450 ms wait, six at a time at most
    const rows = await t.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, deadIds));
    const claims = await t.db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deadIds));
    const now = deps.clock.now().getTime();
    for (const row of rows) {
      if (sentDead.has(row.id)) {
        expect([row.status, row.attemptCount]).toEqual(["PENDING", 1]);
        expect(claims.filter((c) => c.deliveryId === row.id).map((c) => c.error)).toEqual(["no answer within 300 ms"]);
      } else {
        expect([row.status, row.attemptCount, row.nextAttemptAt?.getTime()]).toEqual(["PENDING", 0, now + deferredSeconds(deps.timeoutMs) * 1000]);
        expect(claims.filter((c) => c.deliveryId === row.id)).toEqual([]);
      }
    }
    const again = outbound.messages.splice(0);
    const deferred = again.filter((m) => m.delaySeconds === deferredSeconds(deps.timeoutMs)).map((m) => m.body);
    expect(deferred.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      deadIds
        .filter((id) => !sentDead.has(id))
        .map(first)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    expect(again.filter((m) => m.delaySeconds !== deferredSeconds(deps.timeoutMs)).map((m) => m.body)).toEqual(
      expect.arrayContaining([...sentDead].map((deliveryId) => ({ kind: "delivery", deliveryId, attempt: 2 }))),
    );

    // The deferred attempts come back once the endpoints answer: each goes out as attempt 1 and succeeds.
    endpointsAnswer = true;
    const back = deferred.map((body) => ({ id: newId(), timestamp: new Date(), body, attempts: 1, ack: () => undefined, retry: () => undefined }));
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages: back } as unknown as MessageBatch<DeliveryMessage>, deps);
    const after = await t.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, deadIds));
    for (const row of after.filter((r) => !sentDead.has(r.id))) expect([row.status, row.attemptCount]).toEqual(["SUCCEEDED", 1]);
  });
});

test("a message of a kind this worker does not know is logged and acked; its work waits for the recovery pass", async () => {
  const s = await setup(() => new Response("ok"));
  const settled: string[] = [];
  const message = {
    id: newId(),
    timestamp: new Date(),
    body: { kind: "later" },
    attempts: 1,
    ack: () => settled.push("ack"),
    retry: () => settled.push("retry"),
  };
  await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages: [message] } as unknown as MessageBatch<DeliveryMessage>, s.deps);
  expect(settled).toEqual(["ack"]);
  expect(s.errors).toEqual([`unknown delivery message ${JSON.stringify({ messageId: message.id, kind: "later" })}`]);
  expect(s.requests).toEqual([]);
});

describe("the dead-letter queue", () => {
  test("a message that exhausted its Queue retries is dead-lettered, logged with its delivery's state, and left PENDING for the recovery pass", async () => {
    // Every read of the delivery fails: the message (the loan's 3 first attempts) is retried 3 times, then dead-lettered.
    const s = await setup(() => new Response("ok"), { rate: 1, when: "before", match: 'from "webhook_deliveries"' });
    await s.pump();
    expect(s.deadLetters).toHaveLength(1);
    expect(s.deadLetters[0]!.body).toEqual({ kind: "deliveries", attempts: expect.any(Array) });
    expect(
      itemsOf(s.deadLetters[0]!.body)
        .map((i) => (i.kind === "delivery" ? i.deliveryId : ""))
        .sort(),
    ).toEqual([...s.ids].sort());
    expect(s.requests).toEqual([]);
    expect(await s.deliveries()).toEqual([
      ["PENDING", 0],
      ["PENDING", 0],
      ["PENDING", 0],
    ]);

    const acked: string[] = [];
    const errors: string[] = [];
    const batch = {
      queue: DELIVERIES_DLQ,
      messages: s.deadLetters.map((d) => ({ ...d, timestamp: new Date(), ack: () => acked.push(d.id), retry: () => undefined })),
    };
    await consumeDeadLetters(batch as unknown as MessageBatch<DeliveryMessage>, {
      db: t.db,
      log: { info: () => undefined, error: (msg, f) => errors.push(`${msg} ${JSON.stringify(f)}`) },
    });
    expect(acked.sort()).toEqual(s.deadLetters.map((d) => d.id).sort());
    // One line per delivery of the message.
    expect(errors).toHaveLength(3);
    for (const id of s.ids) expect(errors.some((e) => e.includes(id) && e.includes('"status":"PENDING"') && e.includes("recovery pass"))).toBe(true);
  });
});

test("a part recorded in part (its second group of records fails): its messages are retried, and the final failure the first group recorded is relayed at once, not a minute later by the cron relay", async () => {
  const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
  queue.messages.length = 0;
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const quick = await insertWebhookEndpoint(t, owner.tenantId, "https://quick-part.merchant.example/hook", ["loan.funded"]);
  const slow = await insertWebhookEndpoint(t, owner.tenantId, "https://slow-part.merchant.example/hook", ["loan.funded"]);
  expect((await createSandboxLoan(t, key)).status).toBe("ACTIVE");
  const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, owner.tenantId));
  const deliveryOf = (endpointId: string) => rows.find((d) => d.endpointId === endpointId)!.id;
  const [quickId, slowId] = [deliveryOf(quick.id), deliveryOf(slow.id)];
  queue.messages.length = 0;

  const failing = failingBatch(t.client);
  const outbound = memoryDeliveryQueue();
  const errors: string[] = [];
  const deps = {
    db: createDb(failing.client),
    queue: outbound,
    clock: fixedClock(t.clock.now()),
    fetch: async (url: string) => {
      if (url.startsWith("https://slow-part.")) await Bun.sleep(150);
      return new Response("no", { status: 500 });
    },
    secretsKey: DEV_SECRETS_KEY,
    timeoutMs: 2_000,
    retryDelaysSeconds: [0, 0],
    recordGatherMs: 20,
    log: { info: () => undefined, error: (msg: string) => errors.push(msg) },
    mail: { send: async () => ({ ok: true as const }) },
    emailRetrySeconds: [0, 0],
  } as unknown as ReturnType<typeof webhookDepsFromEnv>;
  const consume = async (bodies: DeliveryMessage[]) => {
    const settled: string[] = [];
    const messages = bodies.map((body) => ({
      id: newId(),
      timestamp: new Date(),
      body,
      attempts: 1,
      ack: () => settled.push("ack"),
      retry: () => settled.push("retry"),
    }));
    await consumeDeliveries({ queue: "svc-credit-webhook-deliveries", messages } as unknown as MessageBatch<DeliveryMessage>, deps);
    return settled;
  };
  // The quick endpoint's attempts 1 and 2 fail first, alone.
  expect(await consume([{ kind: "delivery", deliveryId: quickId, attempt: 1 }])).toEqual(["ack"]);
  expect(await consume([{ kind: "delivery", deliveryId: quickId, attempt: 2 }])).toEqual(["ack"]);
  // Batch calls of the part: 1 the claims, 2 the quick attempt 3's group of records (its final failure), 3 the slow one's, which fails.
  failing.failBatch(3);
  const settled = await consume([
    { kind: "delivery", deliveryId: quickId, attempt: 3 },
    { kind: "delivery", deliveryId: slowId, attempt: 1 },
  ]);
  expect(settled).toEqual(["retry", "retry"]);
  expect(errors).toEqual(["delivery messages failed"]);
  const [quickRow] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, quickId));
  expect([quickRow!.status, quickRow!.attemptCount]).toEqual(["FAILED", 3]);
  // The webhook.delivery_failed it wrote went out with this invocation: relayed, not left for the cron relay.
  const failures = await t.db
    .select()
    .from(events)
    .where(and(eq(events.tenantId, owner.tenantId), eq(events.type, "webhook.delivery_failed")));
  expect(failures).toHaveLength(1);
  expect(failures[0]!.relayedAt).toBeInstanceOf(Date);
});
