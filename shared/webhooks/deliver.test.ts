import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { createDb } from "../../db/create-db.ts";
import { events } from "../../db/schema/events.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { notifications, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { createKey, createSandboxLoan, insertWebhookEndpoint, signUpTenant } from "../testing/fixtures.ts";
import { DEV_SECRETS_KEY } from "../crypto/secret-box.ts";
import { deterministicUuid, newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { consoleLogger } from "../observability/logger.ts";
import { fixedClock } from "../domain/clock.ts";
import { deferredSeconds } from "./attempt-records.ts";
import { pausedDelaySeconds, QUIET_TIMEOUTS, TIMEOUTS_TO_PAUSE } from "./endpoint-pause.ts";
import { type DeliveryDeps, PartlyRecordedError, processDeliveryBatch, processDeliveryMessage } from "./deliver.ts";
import { RESIGN_AFTER_MS } from "./send-attempt.ts";
import { type memoryDeliveryQueue, sentItems } from "./memory-queue.ts";
import { type DeliveryMessage, itemsOf } from "./messages.ts";
import { relayOutbox } from "./relay-outbox.ts";
import { deleteEndpoint } from "./endpoints.ts";
import { sendTestEvent } from "./send-test-event.ts";
import { redeliver } from "./redeliver.ts";
import type { SendSlots } from "./send-slots.ts";
import { failingBatch } from "../testing/failing-batch.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Received = { url: string; headers: Record<string, string>; body: string };

/** A tenant with endpoints, a loan (so three events), and a consumer whose fetch answers per URL. */
async function setup(answers: Record<string, (r: Received) => Promise<Response>>, subscriptions: Record<string, string[]> = {}) {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const endpoints: Record<string, { id: string; secret: string }> = {};
  for (const url of Object.keys(answers)) endpoints[url] = await insertWebhookEndpoint(t, owner.tenantId, url, subscriptions[url] ?? ["*"]);
  const received: Received[] = [];
  // Like a real fetch, it honours `init.signal`: once the signal aborts, the call rejects with the signal's
  // reason (a TimeoutError for AbortSignal.timeout), whatever the receiver does.
  const fetch: FetchLike = async (url, init) => {
    const r = { url, headers: { ...(init.headers as Record<string, string>) }, body: String(init.body) };
    received.push(r);
    const answer = answers[url];
    if (!answer) throw new Error(`unexpected url ${url}`);
    const signal = init.signal;
    if (!signal) return answer(r);
    const aborted = () => signal.reason ?? new DOMException("This operation was aborted", "AbortError");
    if (signal.aborted) throw aborted();
    return new Promise<Response>((resolve, reject) => {
      signal.addEventListener("abort", () => reject(aborted()), { once: true });
      answer(r).then(resolve, reject);
    });
  };
  // The api relays right after each write into the harness queue: use it, emptied first.
  const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
  queue.messages.length = 0;
  const deps: DeliveryDeps = {
    db: t.db,
    queue,
    clock: t.clock,
    fetch,
    secretsKey: DEV_SECRETS_KEY,
    timeoutMs: 200,
    retryDelaysSeconds: [30, 120],
    log: consoleLogger,
  };
  const loan = await createSandboxLoan(t, key);
  /** Processes queued delivery messages (and those they enqueue) until none is left; returns how many ran. */
  async function pump(max = 100) {
    let ran = 0;
    while (queue.messages.length > 0 && ran < max) {
      const { body } = queue.messages.shift()!;
      for (const item of itemsOf(body)) if (item.kind === "delivery") await processDeliveryMessage(deps, item);
      ran++;
    }
    return ran;
  }
  return { owner, key, endpoints, received, queue, deps, pump, loanId: loan.id as string };
}

const deliveriesOf = (tenantId: string) => t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, tenantId));
const attemptsOf = (deliveryId: string) =>
  t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(webhookAttempts.attempt);

/** A Db over the test client that counts its calls of the given methods (`execute`, `batch`: each a round trip). */
function countingDb(methods: string[]) {
  const counts = { calls: 0 };
  const client = new Proxy(t.client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (methods.includes(String(prop))) counts.calls++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { db: createDb(client), counts };
}

/** The delivery messages the setup's loan queued, the queue emptied. */
function queuedDeliveries(s: { queue: { messages: { body: DeliveryMessage }[] } }) {
  const msgs = sentItems(s.queue.messages as never)
    .filter((m) => m.body.kind === "delivery")
    .map((m) => m.body as Extract<DeliveryMessage, { kind: "delivery" }>);
  s.queue.messages.length = 0;
  return msgs;
}

describe("delivery", () => {
  test("happy path: every delivery signed (x-svc-signature and Standard Webhooks), one attempt each", async () => {
    const s = await setup({ "https://hooks.merchant.example/ok": async () => new Response("ok") });
    await s.pump();
    const { secret } = s.endpoints["https://hooks.merchant.example/ok"]!;
    expect(s.received.map((r) => r.headers["x-svc-event"])).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    for (const r of s.received) {
      expect(r.headers["x-svc-signature"]).toBe(createHmac("sha256", secret).update(r.body).digest("hex"));
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`;
      expect(r.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(signed).digest("base64")}`);
      const envelope = JSON.parse(r.body);
      expect(r.headers["webhook-id"]).toBe(envelope.id);
      expect(envelope).toMatchObject({ type: r.headers["x-svc-event"], tenantId: s.owner.tenantId, program: null, channel: null });
      expect(envelope.data.loan.id).toBe(s.loanId);
      expect(r.headers["x-svc-delivery"]).toEqual(expect.any(String));
    }
    const rows = await deliveriesOf(s.owner.tenantId);
    expect(rows.map((d) => [d.status, d.attemptCount])).toEqual([
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
      ["SUCCEEDED", 1],
    ]);
  });

  test("an endpoint answering 500 gets exactly 3 attempts with the configured backoff, then one webhook.delivery_failed to the other endpoint only", async () => {
    const dead = "https://dead.merchant.example/hook";
    const alive = "https://alive.merchant.example/hook";
    const s = await setup(
      { [dead]: async () => new Response("boom", { status: 500 }), [alive]: async () => new Response(null, { status: 204 }) },
      { [dead]: ["loan.funded"], [alive]: ["webhook.delivery_failed"] },
    );
    const delays: (number | undefined)[] = [];
    while (s.queue.messages.length > 0) {
      for (const m of sentItems(s.queue.messages.splice(0, 1))) {
        if (m.body.kind !== "delivery") continue;
        if (m.body.attempt > 1) delays.push(m.delaySeconds);
        await processDeliveryMessage(s.deps, m.body);
        await relayOutbox({ db: t.db, queue: s.queue }, { now: t.clock.now(), tenantId: s.owner.tenantId });
      }
    }
    const toDead = s.received.filter((r) => r.url === dead);
    expect(toDead).toHaveLength(3);
    expect(new Set(toDead.map((r) => r.headers["webhook-id"])).size).toBe(1); // the same event id on every attempt
    expect(delays).toEqual([30, 120]);
    const [failedDelivery] = (await deliveriesOf(s.owner.tenantId)).filter((d) => d.endpointId === s.endpoints[dead]!.id);
    expect(failedDelivery).toMatchObject({ status: "FAILED", attemptCount: 3 });
    const attempts = await attemptsOf(failedDelivery!.id);
    expect(attempts.map((a) => [a.attempt, a.responseStatus, a.error, a.succeeded])).toEqual([
      [1, 500, "HTTP 500", false],
      [2, 500, "HTTP 500", false],
      [3, 500, "HTTP 500", false],
    ]);
    const failedEvents = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(failedEvents).toHaveLength(1);
    expect(failedEvents[0]!.envelope.data).toMatchObject({
      delivery: { id: failedDelivery!.id, endpointId: s.endpoints[dead]!.id, eventType: "loan.funded", attempts: 3 },
    });
    const toAlive = s.received.filter((r) => r.url === alive);
    expect(toAlive.map((r) => r.headers["x-svc-event"])).toEqual(["webhook.delivery_failed"]);
    const [notification] = await t.db.select().from(notifications).where(eq(notifications.eventId, failedEvents[0]!.id));
    expect(notification).toMatchObject({ eventType: "webhook.delivery_failed", emailStatus: "PENDING", emailTo: s.owner.email });
  });

  test("webhook.delivery_failed is stamped on the tenant's clock, as its other events: a sandbox clock that runs ahead", async () => {
    const dead = "https://dead.merchant.example/clock";
    const s = await setup({ [dead]: async () => new Response("boom", { status: 500 }) }, { [dead]: ["loan.funded"] });
    const offsetMs = 3 * 86_400_000;
    await t.db.update(tenants).set({ clockOffsetMs: offsetMs }).where(eq(tenants.id, s.owner.tenantId));
    while (s.queue.messages.length > 0) {
      for (const m of sentItems(s.queue.messages.splice(0, 1))) if (m.body.kind === "delivery") await processDeliveryMessage(s.deps, m.body);
    }
    const [alarm] = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(alarm).toBeDefined();
    expect(Date.parse(alarm!.envelope.createdAt)).toBe(t.clock.now().getTime() + offsetMs);
    expect(alarm!.createdAt.getTime()).toBe(t.clock.now().getTime() + offsetMs);
  });

  test("an endpoint deleted after a failed attempt: its pending deliveries end FAILED at once, no further attempt, no webhook.delivery_failed", async () => {
    const dead = "https://dead.merchant.example/deleted";
    const alive = "https://alive.merchant.example/other";
    const s = await setup(
      { [dead]: async () => new Response("boom", { status: 500 }), [alive]: async () => new Response(null, { status: 204 }) },
      { [dead]: ["loan.funded"], [alive]: ["webhook.delivery_failed"] },
    );
    // Attempt 1 fails; attempt 2 is queued (30 s later).
    const first = sentItems(s.queue.messages.splice(0)).filter((m) => m.body.kind === "delivery");
    for (const m of first) await processDeliveryMessage(s.deps, m.body as never);
    const [delivery] = (await deliveriesOf(s.owner.tenantId)).filter((d) => d.endpointId === s.endpoints[dead]!.id);
    expect(delivery).toMatchObject({ status: "PENDING", attemptCount: 1 });
    const second = sentItems(s.queue.messages.splice(0));
    expect(second.map((m) => m.body)).toEqual([{ kind: "delivery", deliveryId: delivery!.id, attempt: 2 }]);

    await deleteEndpoint({ db: t.db }, { tenantId: s.owner.tenantId, id: s.endpoints[dead]!.id, now: t.clock.now() });
    expect((await deliveriesOf(s.owner.tenantId)).find((d) => d.id === delivery!.id)).toMatchObject({ status: "FAILED", attemptCount: 1, nextAttemptAt: null });
    // The queued attempt 2 arrives: dropped, nothing sent, nothing recorded.
    expect(await processDeliveryMessage(s.deps, second[0]!.body as never)).toEqual({ ack: true });
    expect(s.received.filter((r) => r.url === dead)).toHaveLength(1);
    expect((await attemptsOf(delivery!.id)).map((a) => [a.attempt, a.responseStatus])).toEqual([[1, 500]]);
    await relayOutbox({ db: t.db, queue: s.queue }, { now: t.clock.now(), tenantId: s.owner.tenantId });
    const alarms = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(alarms).toEqual([]);
    expect(s.received.filter((r) => r.url === alive)).toEqual([]);
  });

  test("an attempt claimed as its endpoint is deleted is not sent and ends the delivery, without webhook.delivery_failed", async () => {
    const gone = "https://gone.merchant.example/hook";
    const s = await setup({ [gone]: async () => new Response("ok") }, { [gone]: ["loan.funded"] });
    const [delivery] = await deliveriesOf(s.owner.tenantId);
    // Deleted the way a race would leave it: the endpoint gone, its delivery still PENDING.
    await t.db.update(webhookEndpoints).set({ deletedAt: t.clock.now() }).where(eq(webhookEndpoints.id, s.endpoints[gone]!.id));
    const outcome = await processDeliveryMessage(s.deps, { deliveryId: delivery!.id, attempt: 1 });
    expect(outcome).toEqual({ ack: true });
    expect(s.received).toEqual([]);
    expect((await deliveriesOf(s.owner.tenantId))[0]).toMatchObject({ status: "FAILED", attemptCount: 1, nextAttemptAt: null });
    expect((await attemptsOf(delivery!.id)).map((a) => [a.attempt, a.error, a.responseStatus])).toEqual([[1, "endpoint deleted", null]]);
    const alarms = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(alarms).toEqual([]);
  });

  test("a receiver that never answers: each attempt fails after the configured timeout, recorded as such", async () => {
    const silent = "https://silent.merchant.example/hook";
    const reset = "https://reset.merchant.example/hook";
    const s = await setup(
      {
        // Accepts the connection and never answers: only the delivery's own timeout ends the attempt.
        [silent]: () => new Promise<Response>(() => {}),
        [reset]: async () => {
          throw new TypeError("connection reset by peer");
        },
      },
      { [silent]: ["loan.funded"], [reset]: ["loan.funded"] },
    );
    // Without a timeout the pump would wait forever: fail fast and say why instead.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const guard = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("the delivery never timed out")), 5_000)));
    await Promise.race([s.pump(), guard]).finally(() => clearTimeout(timer));
    const rows = await deliveriesOf(s.owner.tenantId);
    const of = (url: string) => rows.find((d) => d.endpointId === s.endpoints[url]!.id)!;
    expect([of(silent).status, of(silent).attemptCount]).toEqual(["FAILED", 3]);
    expect([of(reset).status, of(reset).attemptCount]).toEqual(["FAILED", 3]);
    const silentAttempts = await attemptsOf(of(silent).id);
    expect(silentAttempts.map((a) => [a.error, a.responseStatus])).toEqual(Array(3).fill(["no answer within 200 ms", null]));
    // Each attempt waited the configured 200 ms, not less (and not forever).
    for (const a of silentAttempts) expect(a.durationMs).toBeGreaterThanOrEqual(195);
    expect((await attemptsOf(of(reset).id)).map((a) => a.error)).toEqual(Array(3).fill("network error: connection reset by peer"));
  });

  test("a message delivered twice causes no extra attempt", async () => {
    const url = "https://hooks.merchant.example/dup";
    const s = await setup({ [url]: async () => new Response("ok") }, { [url]: ["loan.funded"] });
    const first = sentItems(s.queue.messages).find((m) => m.body.kind === "delivery")!.body as Extract<DeliveryMessage, { kind: "delivery" }>;
    await processDeliveryMessage(s.deps, first);
    await processDeliveryMessage(s.deps, first);
    await Promise.all([processDeliveryMessage(s.deps, first), processDeliveryMessage(s.deps, first)]);
    expect(s.received).toHaveLength(1);
    expect(await attemptsOf(first.deliveryId)).toHaveLength(1);
  });

  test("concurrent duplicates of a failing attempt still make exactly 3 attempts", async () => {
    const url = "https://dead.merchant.example/race";
    const s = await setup({ [url]: async () => new Response("no", { status: 503 }) }, { [url]: ["loan.funded"] });
    for (let round = 0; round < 6 && s.queue.messages.length > 0; round++) {
      const batch = sentItems(s.queue.messages.splice(0));
      // Every message arrives three times at once.
      await Promise.all(batch.flatMap((m) => (m.body.kind === "delivery" ? [1, 2, 3].map(() => processDeliveryMessage(s.deps, m.body as never)) : [])));
    }
    expect(s.received).toHaveLength(3);
    const [d] = await deliveriesOf(s.owner.tenantId);
    expect(d).toMatchObject({ status: "FAILED", attemptCount: 3 });
  });

  test("a worker that died after claiming an attempt: the attempt is counted, not lost and not repeated", async () => {
    const url = "https://hooks.merchant.example/crash";
    const s = await setup({ [url]: async () => new Response("ok") }, { [url]: ["loan.funded"] });
    const msg = sentItems(s.queue.messages).find((m) => m.body.kind === "delivery")!.body as Extract<DeliveryMessage, { kind: "delivery" }>;
    const [delivery] = await deliveriesOf(s.owner.tenantId);
    // The claim of attempt 1 exists, its outcome was never recorded.
    await t.db
      .insert(webhookAttempts)
      .values({ id: newId(), tenantId: s.owner.tenantId, deliveryId: delivery!.id, attempt: 1, startedAt: new Date(t.clock.now().getTime() - 60_000) });
    const outcome = await processDeliveryMessage(s.deps, msg);
    expect(outcome).toEqual({ ack: true });
    expect(s.received).toHaveLength(0);
    const after = await attemptsOf(delivery!.id);
    expect(after.map((a) => [a.attempt, a.error])).toEqual([[1, "interrupted before its outcome was recorded"]]);
    // The interruption was ours: the next attempt goes at once, not after the backoff.
    expect(s.queue.messages.at(-1)).toEqual({ body: { kind: "delivery", deliveryId: delivery!.id, attempt: 2 }, delaySeconds: 0 });
    // A recent claim is waited for instead.
    await s.pump();
    expect(s.received).toHaveLength(1);
    expect((await deliveriesOf(s.owner.tenantId))[0]).toMatchObject({ status: "SUCCEEDED", attemptCount: 2 });
  });

  test("a Queue batch: one read, one claim batch, one record batch for all its deliveries; duplicates in it send nothing more", async () => {
    const url = "https://hooks.merchant.example/batch";
    const s = await setup({ [url]: async () => new Response("ok") });
    const msgs = queuedDeliveries(s);
    expect(msgs).toHaveLength(3);
    // Count the database round trips the batch makes (each execute or batch of the client).
    const counting = countingDb(["execute", "batch"]);
    const outcomes = await processDeliveryBatch({ ...s.deps, db: counting.db }, msgs);
    expect(outcomes).toEqual([{ ack: true }, { ack: true }, { ack: true }]);
    expect(s.received).toHaveLength(3);
    expect(counting.counts.calls).toBe(3); // the deliveries, the claims, the outcomes
    // The same batch again, twice over and with duplicates inside: nothing more is sent.
    await processDeliveryBatch(s.deps, [...msgs, ...msgs]);
    await Promise.all([processDeliveryBatch(s.deps, msgs), processDeliveryBatch(s.deps, msgs)]);
    expect(s.received).toHaveLength(3);
    const rows = await deliveriesOf(s.owner.tenantId);
    expect(rows.map((d) => [d.status, d.attemptCount])).toEqual(Array(3).fill(["SUCCEEDED", 1]));
  });

  test("one batch holding two tenants' deliveries to three endpoints: each request is signed with its own endpoint's secret", async () => {
    const a = await setup({ "https://a1.example/hook": async () => new Response("ok"), "https://a2.example/hook": async () => new Response("ok") });
    // Each setup empties the harness queue first: take the first attempts of one before making the other.
    const attemptsIn = (queue: typeof a.queue) =>
      sentItems(queue.messages.splice(0))
        .filter((m) => m.body.kind === "delivery")
        .map((m) => m.body as Extract<DeliveryMessage, { kind: "delivery" }>);
    const ofA = attemptsIn(a.queue);
    const b = await setup({ "https://b1.example/hook": async () => new Response("ok") });
    const msgs = [...ofA, ...attemptsIn(b.queue)];
    expect(msgs).toHaveLength(9); // 3 events × 3 endpoints
    const fetch: FetchLike = (url, init) => (url.startsWith("https://a") ? a.deps.fetch : b.deps.fetch)(url, init);
    const outcomes = await processDeliveryBatch({ ...a.deps, fetch }, msgs.reverse());
    expect(outcomes).toEqual(Array(9).fill({ ack: true }));
    const received = [...a.received, ...b.received];
    expect(received).toHaveLength(9);
    const secrets = { ...a.endpoints, ...b.endpoints };
    for (const r of received) {
      const { secret } = secrets[r.url]!;
      expect(r.headers["x-svc-signature"]).toBe(createHmac("sha256", secret).update(r.body).digest("hex"));
      const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`;
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      expect(r.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(signed).digest("base64")}`);
      expect(JSON.parse(r.body).tenantId).toBe(r.url.startsWith("https://a") ? a.owner.tenantId : b.owner.tenantId);
    }
  });

  test("an attempt that gets no request slot in time is deferred, alone or in a batch: nothing sent, no attempt counted, its claim released, its delivery due when it comes back", async () => {
    const url = "https://hooks.merchant.example/deferred";
    const s = await setup({ [url]: async () => new Response("ok") });
    const msgs = sentItems(s.queue.messages.splice(0))
      .filter((m) => m.body.kind === "delivery")
      .map((m) => m.body as Extract<DeliveryMessage, { kind: "delivery" }>);
    const noSlot = { ...s.deps, slots: { take: async () => undefined } };
    expect(deferredSeconds(10_000)).toBe(10); // one delivery timeout: 10 s in production
    const due = s.deps.clock.now().getTime() + deferredSeconds(s.deps.timeoutMs) * 1000;
    expect(await processDeliveryMessage(noSlot, { ...msgs[0]!, messageId: newId() })).toEqual({
      ack: false,
      retryInSeconds: deferredSeconds(s.deps.timeoutMs),
    });
    expect(
      await processDeliveryBatch(
        noSlot,
        msgs.slice(1).map((m) => ({ ...m, messageId: newId() })),
      ),
    ).toEqual(Array(2).fill({ ack: false, retryInSeconds: deferredSeconds(s.deps.timeoutMs) }));
    expect(s.received).toEqual([]);
    expect(s.queue.messages).toEqual([]); // the consumer re-sends deferred attempts (consume-deliveries.ts)
    const rows = await deliveriesOf(s.owner.tenantId);
    expect(rows.map((d) => [d.status, d.attemptCount, d.nextAttemptAt?.getTime()])).toEqual(Array(3).fill(["PENDING", 0, due]));
    for (const d of rows) expect(await attemptsOf(d.id)).toEqual([]);
    // Back with a slot: attempt 1, once.
    await processDeliveryBatch(s.deps, msgs);
    expect(s.received).toHaveLength(3);
    expect((await deliveriesOf(s.owner.tenantId)).map((d) => [d.status, d.attemptCount])).toEqual(Array(3).fill(["SUCCEEDED", 1]));
  });

  test("a request is signed before it waits for its slot, and signed again if the wait took over 5 s: its webhook-timestamp is when it went out", async () => {
    for (const waitMs of [RESIGN_AFTER_MS - 1_000, RESIGN_AFTER_MS + 1_000]) {
      const url = `https://hooks.merchant.example/resign-${waitMs}`;
      const s = await setup({ [url]: async () => new Response("ok") }, { [url]: ["loan.funded"] });
      const msgs = sentItems(s.queue.messages.splice(0))
        .filter((m) => m.body.kind === "delivery")
        .map((m) => ({ ...(m.body as Extract<DeliveryMessage, { kind: "delivery" }>), messageId: newId() }));
      expect(msgs).toHaveLength(1);
      const clock = fixedClock(new Date("2026-11-23T12:00:00.000Z"));
      const signedAt = clock.now().getTime() / 1000;
      // The slot comes `waitMs` after the request asked for it.
      const slots: SendSlots = {
        take: async () => {
          clock.advance(waitMs);
          return { done: () => undefined };
        },
      };
      expect(await processDeliveryMessage({ ...s.deps, clock, slots }, msgs[0]!)).toEqual({ ack: true });
      expect(s.received).toHaveLength(1);
      const r = s.received[0]!;
      expect(Number(r.headers["webhook-timestamp"])).toBe(waitMs > RESIGN_AFTER_MS ? signedAt + waitMs / 1000 : signedAt);
      const { secret } = s.endpoints[url]!;
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`;
      expect(r.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(signed).digest("base64")}`);
      expect(r.headers["x-svc-signature"]).toBe(createHmac("sha256", secret).update(r.body).digest("hex"));
    }
  });

  test("batches of a failing endpoint's messages, each arriving three times at once: exactly 3 attempts and one webhook.delivery_failed", async () => {
    const url = "https://dead.merchant.example/batches";
    const s = await setup({ [url]: async () => new Response("no", { status: 500 }) }, { [url]: ["loan.funded", "loan.decision"] });
    for (let round = 0; round < 6 && s.queue.messages.length > 0; round++) {
      const batch = sentItems(s.queue.messages.splice(0)).flatMap((m) => (m.body.kind === "delivery" ? [m.body, m.body, m.body] : []));
      await Promise.all([processDeliveryBatch(s.deps, batch), processDeliveryBatch(s.deps, batch)]);
    }
    expect(s.received).toHaveLength(6);
    const rows = await deliveriesOf(s.owner.tenantId);
    expect(rows.map((d) => [d.status, d.attemptCount])).toEqual(Array(2).fill(["FAILED", 3]));
    const failedEvents = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(failedEvents).toHaveLength(2);
  });

  test("attempts recorded in one group keep their own finish: a quick 500's retry waits the configured delay from its answer, not from when the group (waiting on a hanging request) is recorded", async () => {
    const quick = "https://quick.merchant.example/hook";
    const hanging = "https://hanging.merchant.example/hook";
    const clock = fixedClock(new Date());
    const s = await setup(
      {
        [quick]: async () => new Response("no", { status: 500 }),
        // Answers nothing; 50 ms in, the deliveries' clock has moved 10 s on (the time the batch then waits).
        [hanging]: async () => {
          await Bun.sleep(50);
          clock.advance(10_000);
          return new Promise<Response>(() => {});
        },
      },
      { [quick]: ["loan.funded"], [hanging]: ["loan.funded"] },
    );
    const msgs = queuedDeliveries(s);
    expect(msgs).toHaveLength(2);
    const started = clock.now().getTime();
    await processDeliveryBatch({ ...s.deps, clock }, msgs);
    const rows = await deliveriesOf(s.owner.tenantId);
    const of = (url: string) => rows.find((d) => d.endpointId === s.endpoints[url]!.id)!;
    const [quickAttempt] = await attemptsOf(of(quick).id);
    const [hangingAttempt] = await attemptsOf(of(hanging).id);
    expect(quickAttempt).toMatchObject({ responseStatus: 500, finishedAt: new Date(started) });
    expect(hangingAttempt).toMatchObject({ error: "no answer within 200 ms", finishedAt: new Date(started + 10_000) });
    // 30 s after its own answer (before: 30 s after the batch's end, 10 s later).
    expect(of(quick).nextAttemptAt).toEqual(new Date(started + 30_000));
    expect(of(hanging).nextAttemptAt).toEqual(new Date(started + 40_000));
    const next = sentItems(s.queue.messages).map((m) => ({ deliveryId: (m.body as { deliveryId: string }).deliveryId, delaySeconds: m.delaySeconds }));
    expect(next).toContainEqual({ deliveryId: of(quick).id, delaySeconds: 20 });
    expect(next).toContainEqual({ deliveryId: of(hanging).id, delaySeconds: 30 });
  });

  test("attempts are recorded as they finish: beside an endpoint that never answers, a quick answer is recorded and its retry queued while the other is still out; then the other, in a group of its own", async () => {
    const quick = "https://quick-record.merchant.example/hook";
    const hanging = "https://hanging-record.merchant.example/hook";
    const s = await setup(
      { [quick]: async () => new Response("no", { status: 500 }), [hanging]: () => new Promise<Response>(() => {}) },
      { [quick]: ["loan.funded"], [hanging]: ["loan.funded"] },
    );
    const msgs = queuedDeliveries(s);
    expect(msgs).toHaveLength(2);
    const counting = countingDb(["batch"]);
    const running = processDeliveryBatch({ ...s.deps, db: counting.db, timeoutMs: 1_500, recordGatherMs: 20 }, msgs);
    const rows = await deliveriesOf(s.owner.tenantId);
    const of = (url: string) => rows.find((d) => d.endpointId === s.endpoints[url]!.id)!;
    const nextFor = (url: string) => sentItems(s.queue.messages).filter((m) => (m.body as { deliveryId: string }).deliveryId === of(url).id);
    // While the hanging request is out (1.5 s timeout), the quick 500 is recorded and its attempt 2 queued.
    let quickAttempt: typeof webhookAttempts.$inferSelect | undefined;
    for (let i = 0; i < 100 && !quickAttempt?.finishedAt; i++) {
      await Bun.sleep(10);
      [quickAttempt] = await attemptsOf(of(quick).id);
    }
    expect(quickAttempt).toMatchObject({ attempt: 1, responseStatus: 500, finishedAt: expect.any(Date) });
    expect((await deliveriesOf(s.owner.tenantId)).find((d) => d.id === of(quick).id)).toMatchObject({ status: "PENDING", attemptCount: 1 });
    expect(nextFor(quick).map((m) => m.body)).toEqual([{ kind: "delivery", deliveryId: of(quick).id, attempt: 2 }]);
    const [hangingOut] = await attemptsOf(of(hanging).id);
    expect(hangingOut).toMatchObject({ attempt: 1, finishedAt: null });
    expect(nextFor(hanging)).toEqual([]);
    expect(await running).toEqual([{ ack: true }, { ack: true }]);
    const [hangingAttempt] = await attemptsOf(of(hanging).id);
    expect(hangingAttempt).toMatchObject({ attempt: 1, error: "no answer within 1500 ms", finishedAt: expect.any(Date) });
    expect(nextFor(hanging).map((m) => m.body)).toEqual([{ kind: "delivery", deliveryId: of(hanging).id, attempt: 2 }]);
    // The claims, then one group of records each (the deliveries' read is not a batch).
    expect(counting.counts.calls).toBe(3);
    expect(s.received).toHaveLength(2);
  });

  test("a batch recorded in part (its second group's batch fails): the error names the tenant whose final failure the first group recorded, so the consumer relays its webhook.delivery_failed at once", async () => {
    const quick = "https://quick-part.merchant.example/hook";
    const slow = "https://slow-part.merchant.example/hook";
    const s = await setup(
      {
        [quick]: async () => new Response("no", { status: 500 }),
        [slow]: async () => {
          await Bun.sleep(150);
          return new Response("no", { status: 500 });
        },
      },
      { [quick]: ["loan.funded"], [slow]: ["loan.funded"] },
    );
    queuedDeliveries(s);
    const rows = await deliveriesOf(s.owner.tenantId);
    const of = (url: string) => rows.find((d) => d.endpointId === s.endpoints[url]!.id)!;
    // The quick endpoint's attempts 1 and 2 fail first, alone.
    await processDeliveryMessage(s.deps, { deliveryId: of(quick).id, attempt: 1 });
    await processDeliveryMessage(s.deps, { deliveryId: of(quick).id, attempt: 2 });
    s.queue.messages.length = 0;
    // Batch calls: 1 the claims, 2 the quick attempt 3's group (its final failure), 3 the slow one's group, which fails.
    const failing = failingBatch(t.client);
    failing.failBatch(3);
    const msgs = [
      { deliveryId: of(quick).id, attempt: 3, messageId: "part-m1" },
      { deliveryId: of(slow).id, attempt: 1, messageId: "part-m2" },
    ];
    const thrown = await processDeliveryBatch({ ...s.deps, db: createDb(failing.client), timeoutMs: 2_000, recordGatherMs: 20 }, msgs).catch((err) => err);
    expect(thrown).toBeInstanceOf(PartlyRecordedError);
    expect(thrown.failedForTenants).toEqual([s.owner.tenantId]);
    expect(String(thrown.cause)).toContain("no such table");
    expect((await deliveriesOf(s.owner.tenantId)).find((d) => d.id === of(quick).id)).toMatchObject({ status: "FAILED", attemptCount: 3 });
    // The Queue's retry of both messages: the quick one is found FAILED (no failedForTenant from it: hence the error's),
    // the slow one's attempt 1 is sent again under its own claim and recorded; one webhook.delivery_failed in all.
    expect(await processDeliveryBatch({ ...s.deps, timeoutMs: 2_000, recordGatherMs: 20 }, msgs)).toEqual([{ ack: true }, { ack: true }]);
    expect((await deliveriesOf(s.owner.tenantId)).find((d) => d.id === of(slow).id)).toMatchObject({ status: "PENDING", attemptCount: 1 });
    const failures = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, s.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(failures).toHaveLength(1);
  });

  test("an endpoint deleted while its attempt is out: the attempt's answer is recorded and counted, the delivery stays FAILED; a third one raises no webhook.delivery_failed", async () => {
    const doomed = "https://doomed.merchant.example/hook";
    let deleteNow: () => Promise<void> = async () => {};
    const s = await setup(
      {
        [doomed]: async () => {
          await deleteNow();
          return new Response("no", { status: 500 });
        },
      },
      { [doomed]: ["loan.funded"] },
    );
    const [delivery] = await deliveriesOf(s.owner.tenantId);
    deleteNow = () => deleteEndpoint({ db: t.db }, { tenantId: s.owner.tenantId, id: s.endpoints[doomed]!.id, now: t.clock.now() });
    expect(await processDeliveryMessage(s.deps, { deliveryId: delivery!.id, attempt: 1 })).toEqual({ ack: true });
    expect((await deliveriesOf(s.owner.tenantId))[0]).toMatchObject({ status: "FAILED", attemptCount: 1, nextAttemptAt: null });
    expect((await attemptsOf(delivery!.id)).map((a) => [a.attempt, a.responseStatus, a.finishedAt !== null])).toEqual([[1, 500, true]]);

    // The same race on a last attempt: counted, FAILED, and no alert for an endpoint the merchant removed.
    const other = await setup({ [doomed]: async () => new Response("no", { status: 500 }) }, { [doomed]: ["loan.funded"] });
    const [last] = await deliveriesOf(other.owner.tenantId);
    await t.db.update(webhookDeliveries).set({ attemptCount: 2 }).where(eq(webhookDeliveries.id, last!.id));
    deleteNow = () => deleteEndpoint({ db: t.db }, { tenantId: other.owner.tenantId, id: other.endpoints[doomed]!.id, now: t.clock.now() });
    const fetchDeleting: FetchLike = async (url, init) => {
      await deleteNow();
      return other.deps.fetch(url, init);
    };
    // Acked (a relay pass may follow: the alert's insert was prepared, its condition then wrote nothing).
    expect((await processDeliveryMessage({ ...other.deps, fetch: fetchDeleting }, { deliveryId: last!.id, attempt: 3 })).ack).toBe(true);
    expect((await deliveriesOf(other.owner.tenantId))[0]).toMatchObject({ status: "FAILED", attemptCount: 3 });
    const alarms = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, other.owner.tenantId), eq(events.type, "webhook.delivery_failed")));
    expect(alarms).toEqual([]);
  });

  test("events go only to subscribed endpoints of their own tenant", async () => {
    const a = await setup({ "https://a.example/hook": async () => new Response("ok") }, { "https://a.example/hook": ["loan.decision"] });
    await a.pump();
    const b = await setup({ "https://b.example/hook": async () => new Response("ok") });
    await b.pump();
    expect(a.received.map((r) => r.headers["x-svc-event"])).toEqual(["loan.decision"]);
    expect(b.received.every((r) => JSON.parse(r.body).tenantId === b.owner.tenantId)).toBe(true);
  });
});

describe("an endpoint that keeps timing out is paused (one tenant's hanging endpoints held the consumers' request slots and delayed every tenant's webhooks by minutes)", () => {
  const endpointOf = async (id: string) => (await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]!;

  test(`${TIMEOUTS_TO_PAUSE} timeouts in a row of an endpoint quiet for ${QUIET_TIMEOUTS} timeouts pause it: its attempts go back to the Queue unsent (no request, no attempt counted) until the pause ends; an answer, whatever its status, ends the pause`, async () => {
    const url = "https://hanging-pause.merchant.example/hook";
    let answer: () => Promise<Response> = () => new Promise<Response>(() => {});
    const setUp = await setup({ [url]: () => answer() });
    // Its own clock, moved without moving the app's (sessions are checked against real time).
    const clock = fixedClock(new Date(Math.max(t.clock.now().getTime(), Date.now())));
    const s = { ...setUp, deps: { ...setUp.deps, clock } };
    const endpointId = s.endpoints[url]!.id;
    const msgs = queuedDeliveries(s);
    expect(msgs).toHaveLength(3);
    // Registered a while ago (a new endpoint is given the quiet window to answer first).
    clock.advance(QUIET_TIMEOUTS * s.deps.timeoutMs + 1);
    expect(await processDeliveryBatch(s.deps, msgs)).toEqual([{ ack: true }, { ack: true }, { ack: true }]);
    expect(s.received).toHaveLength(3);
    // The first pause: 3 delivery timeouts (200 ms here; 30 s in production).
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 3, pausedUntil: clock.now().getTime() + 3 * s.deps.timeoutMs });

    // The retries (attempt 2) come while it is paused: none is sent, none counted; each goes back until the pause ends.
    s.queue.messages.length = 0;
    const retries = msgs.map((m) => ({ ...m, attempt: 2 }));
    const outcomes = await processDeliveryBatch(s.deps, retries);
    expect(s.received).toHaveLength(3);
    for (const o of outcomes) expect(o).toMatchObject({ ack: false, retryInSeconds: 1 });
    for (const d of await deliveriesOf(s.owner.tenantId)) {
      expect(d).toMatchObject({ status: "PENDING", attemptCount: 1 });
      expect(await attemptsOf(d.id)).toHaveLength(1);
    }
    // One more timeout once the pause is over doubles it.
    clock.advance(3 * s.deps.timeoutMs);
    await processDeliveryMessage(s.deps, retries[0]!);
    expect(s.received).toHaveLength(4);
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 4, pausedUntil: clock.now().getTime() + 6 * s.deps.timeoutMs });

    // It answers again (even with an error): the pause ends at once, and the next attempt goes out.
    clock.advance(6 * s.deps.timeoutMs);
    answer = async () => new Response("down for maintenance", { status: 503 });
    await processDeliveryMessage(s.deps, retries[1]!);
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 0, pausedUntil: null });
    answer = async () => new Response("ok");
    await processDeliveryMessage(s.deps, retries[2]!);
    expect(s.received).toHaveLength(6);
    expect((await deliveriesOf(s.owner.tenantId)).filter((d) => d.status === "SUCCEEDED")).toHaveLength(1);
  });

  test(`an endpoint that answered, or was registered, within the last ${QUIET_TIMEOUTS} timeouts is not paused by timeouts in a row (a flaky endpoint, or one slow on each event's first delivery, is not dead); once quiet that long, the next timeout pauses it`, async () => {
    const url = "https://flaky-pause.merchant.example/hook";
    let answer: () => Promise<Response> = () => new Promise<Response>(() => {});
    const setUp = await setup({ [url]: () => answer() });
    const clock = fixedClock(new Date(Math.max(t.clock.now().getTime(), Date.now())));
    const s = { ...setUp, deps: { ...setUp.deps, clock } };
    const endpointId = s.endpoints[url]!.id;
    const [first, ...rest] = queuedDeliveries(s);
    // Just registered: 3 timeouts do not pause it.
    await processDeliveryBatch(s.deps, [first!, ...rest]);
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 3, pausedUntil: null });
    // It answers (a retry), then times out again: still not paused, it answered lately.
    clock.advance(QUIET_TIMEOUTS * s.deps.timeoutMs + 1);
    answer = async () => new Response("ok");
    await processDeliveryMessage(s.deps, { ...first!, attempt: 2 });
    expect(await endpointOf(endpointId)).toMatchObject({ answeredAt: clock.now().getTime(), timeoutsInARow: 0 });
    answer = () => new Promise<Response>(() => {});
    await processDeliveryBatch(
      s.deps,
      rest.map((m) => ({ ...m, attempt: 2 })),
    );
    await processDeliveryMessage(s.deps, { ...rest[0]!, attempt: 3 });
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 3, pausedUntil: null });
    // Quiet that long: the next timeout pauses it.
    clock.advance(QUIET_TIMEOUTS * s.deps.timeoutMs + 1);
    await processDeliveryMessage(s.deps, { ...rest[1]!, attempt: 3 });
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 4, pausedUntil: expect.any(Number) });
  });

  test("a test event's first attempt goes out to a paused endpoint (the merchant who fixed it finds out at once, not after up to 10 minutes): its answer ends the pause; to one still hanging it counts as a timeout; its retries wait like any attempt", async () => {
    const url = "https://fixed-pause.merchant.example/hook";
    let answer: () => Promise<Response> = () => new Promise<Response>(() => {});
    const setUp = await setup({ [url]: () => answer() });
    const clock = fixedClock(new Date(Math.max(t.clock.now().getTime(), Date.now())));
    const s = { ...setUp, deps: { ...setUp.deps, clock } };
    const endpointId = s.endpoints[url]!.id;
    const pausedFor = 10 * 60_000;
    // Registered a while ago, and paused after 5 timeouts in a row.
    clock.advance(QUIET_TIMEOUTS * s.deps.timeoutMs + 1);
    await t.db
      .update(webhookEndpoints)
      .set({ timeoutsInARow: 5, pausedUntil: clock.now().getTime() + pausedFor })
      .where(eq(webhookEndpoints.id, endpointId));
    const [loanEvent] = queuedDeliveries(s);
    const testEvent = async () => {
      const delivery = await sendTestEvent({ db: t.db, queue: s.queue, clock }, { tenant: { id: s.owner.tenantId, clockOffsetMs: 0 }, endpointId });
      return queuedDeliveries(s).find((m) => m.deliveryId === delivery.id)!;
    };
    // A loan event's attempt waits; the test event's goes out, still hanging: a timeout, the pause extended.
    expect(await processDeliveryMessage(s.deps, loanEvent!)).toMatchObject({ ack: false });
    expect(s.received).toHaveLength(0);
    const hanging = await testEvent();
    expect(await processDeliveryMessage(s.deps, hanging)).toMatchObject({ ack: true });
    expect(s.received.map((r) => JSON.parse(r.body).type)).toEqual(["webhook.test"]);
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 6, pausedUntil: expect.any(Number) });
    // Its retry waits for the pause, as every retry does.
    expect(await processDeliveryMessage(s.deps, { ...hanging, attempt: 2 })).toMatchObject({ ack: false });
    expect(s.received).toHaveLength(1);

    // Fixed: the next test event is answered and ends the pause, so the waiting deliveries go out as they come back.
    answer = async () => new Response("ok");
    expect(await processDeliveryMessage(s.deps, await testEvent())).toMatchObject({ ack: true });
    expect(await endpointOf(endpointId)).toMatchObject({ timeoutsInARow: 0, pausedUntil: null });
    expect(await processDeliveryMessage(s.deps, loanEvent!)).toMatchObject({ ack: true });
    expect(s.received.map((r) => JSON.parse(r.body).type)).toEqual(["webhook.test", "webhook.test", JSON.parse(s.received[2]!.body).type]);
    expect(JSON.parse(s.received[2]!.body).type).toMatch(/^loan\./);
    expect((await deliveriesOf(s.owner.tenantId)).find((d) => d.id === loanEvent!.deliveryId)).toMatchObject({ status: "SUCCEEDED" });
  });

  test("a redelivered test event waits for the pause like any delivery (finished test deliveries redelivered at once each went out to the paused endpoint)", async () => {
    const url = "https://redelivered-pause.merchant.example/hook";
    const setUp = await setup({ [url]: () => new Promise<Response>(() => {}) });
    const clock = fixedClock(new Date(Math.max(t.clock.now().getTime(), Date.now())));
    const s = { ...setUp, deps: { ...setUp.deps, clock } };
    const endpointId = s.endpoints[url]!.id;
    queuedDeliveries(s);
    const test = await sendTestEvent({ db: t.db, queue: s.queue, clock }, { tenant: { id: s.owner.tenantId, clockOffsetMs: 0 }, endpointId });
    queuedDeliveries(s);
    await t.db.update(webhookDeliveries).set({ status: "FAILED", attemptCount: 3, nextAttemptAt: null }).where(eq(webhookDeliveries.id, test.id));
    await t.db
      .update(webhookEndpoints)
      .set({ timeoutsInARow: 5, pausedUntil: clock.now().getTime() + 10 * 60_000 })
      .where(eq(webhookEndpoints.id, endpointId));
    const again = await redeliver({ db: t.db, queue: s.queue }, { tenantId: s.owner.tenantId, deliveryId: test.id, now: clock.now() });
    const [message] = queuedDeliveries(s).filter((m) => m.deliveryId === again.id);
    expect(await processDeliveryMessage(s.deps, message!)).toMatchObject({ ack: false });
    expect(s.received).toHaveLength(0);
  });

  test("an endpoint that refuses connections or answers errors at once is never paused: its 3 attempts go as configured", async () => {
    const url = "https://failing-fast.merchant.example/hook";
    const s = await setup({ [url]: async () => new Response("no", { status: 500 }) });
    await s.pump();
    expect(await endpointOf(s.endpoints[url]!.id)).toMatchObject({ timeoutsInARow: 0, pausedUntil: null });
    expect(s.received.length).toBeGreaterThanOrEqual(3);
  });
});

describe("messages of attempts already recorded are handled in bulk (500 stale copies cost 1,000 calls, past an invocation's budget)", () => {
  test("300 copies of three deliveries' recorded first attempts: one read, the next attempts scheduled once each in one send, nothing sent", async () => {
    const url = "https://failing-stale.merchant.example/hook";
    const s = await setup({ [url]: async () => new Response("no", { status: 500 }) });
    const msgs = queuedDeliveries(s);
    await processDeliveryBatch(s.deps, msgs);
    expect(s.received).toHaveLength(3);
    s.queue.messages.length = 0;
    const stale = Array.from({ length: 100 }, () => msgs).flat();
    const counting = countingDb(["execute", "batch"]);
    let sends = 0;
    const queue = { ...s.queue, send: async () => void sends++, sendBatch: async (m: unknown[]) => void (sends++, s.queue.messages.push(...(m as never[]))) };
    const outcomes = await processDeliveryBatch({ ...s.deps, db: counting.db, queue: queue as never }, stale);
    expect(outcomes.every((o) => o.ack)).toBe(true);
    expect(counting.counts.calls).toBe(1);
    expect(sends).toBe(1);
    expect(s.queue.messages.map((m) => (m as unknown as { body: { attempt: number } }).body.attempt)).toEqual([2, 2, 2]);
    expect(s.received).toHaveLength(3);
  });
});

describe("a repeat of a delivery's next attempt in one batch", () => {
  test("the Queue's retry of the message that holds the attempt's claim, batched after another copy: it resumes the claim and sends; the attempt is never counted as interrupted with nothing sent", async () => {
    const url = "https://dup-claim.merchant.example/hook";
    const s = await setup({ [url]: async () => new Response("ok") });
    const [first] = queuedDeliveries(s);
    const deliveryId = first!.deliveryId;
    const clock = fixedClock(new Date(Math.max(t.clock.now().getTime(), Date.now())));
    const deps = { ...s.deps, clock };
    const [d] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    // Message m2 claimed attempt 1 and then its bookkeeping failed (the Queue retries it); another copy, m1, came too.
    await t.db
      .insert(webhookAttempts)
      .values({ id: await deterministicUuid(`webhook-attempt:m2:${deliveryId}:1`), tenantId: d!.tenantId, deliveryId, attempt: 1, startedAt: clock.now() });
    await processDeliveryBatch(deps, [
      { deliveryId, attempt: 1, messageId: "m1" },
      { deliveryId, attempt: 1, messageId: "m2" },
    ]);
    clock.advance(60_000);
    await processDeliveryMessage(deps, { deliveryId, attempt: 1, messageId: "m1" });
    const [attempt] = await attemptsOf(deliveryId);
    expect(attempt).toMatchObject({ attempt: 1, responseStatus: 200 });
    expect(s.received).toHaveLength(1);
  });
});

describe("pausedDelaySeconds", () => {
  test("until the pause ends, plus up to half of it again at random; at least a second", () => {
    const now = new Date(1_000_000);
    expect(pausedDelaySeconds(1_030_000, now, () => 0)).toBe(30);
    expect(pausedDelaySeconds(1_030_000, now, () => 0.999)).toBe(45);
    expect(pausedDelaySeconds(999_000, now, () => 0.5)).toBe(1);
  });
});
