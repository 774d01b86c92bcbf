import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createDb } from "../../db/create-db.ts";
import { notifications, webhookAttempts, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { faultyLibsql } from "../chaos/faulty-d1.ts";
import { DEV_SECRETS_KEY } from "../crypto/secret-box.ts";
import { fixedClock } from "../domain/clock.ts";
import { newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { databaseMailbox } from "../notifications/mail-provider.ts";
import { sendNotificationEmail } from "../notifications/send-notification-email.ts";
import { consoleLogger } from "../observability/logger.ts";
import { createKey, createSandboxLoan, insertWebhookEndpoint, signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { type DeliveryDeps, processDeliveryMessage } from "./deliver.ts";
import { deliveryLeaseMs, requeueStalledDeliveries } from "./stalled-deliveries.ts";
import { type memoryDeliveryQueue, sentItems } from "./memory-queue.ts";
import { itemsOf } from "./messages.ts";

// Fast recovery (issue 15): work whose Queue message died with a worker (or the whole stack) is
// re-sent by the cron tick's recovery pass a lease (timeout + 5 s) after it was due, not 5 minutes
// later, and no attempt ever runs twice, or twice at once.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const TIMEOUT_MS = 1_000;
const LEASE = deliveryLeaseMs(TIMEOUT_MS);

/** A tenant with one endpoint and a funded loan: three events relayed into the harness queue. */
async function setup(answer: (body: string) => Promise<Response> = async () => new Response("ok")) {
  const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
  queue.messages.length = 0;
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  await insertWebhookEndpoint(t, owner.tenantId, "https://hooks.merchant.example/recovery");
  const received: string[] = [];
  const fetch: FetchLike = async (_url, init) => {
    received.push(JSON.parse(String(init.body)).id);
    return answer(String(init.body));
  };
  expect((await createSandboxLoan(t, key)).status).toBe("ACTIVE");
  // The recovery pass runs on its own clock, starting now.
  const clock = fixedClock(t.clock.now());
  const deps: DeliveryDeps = {
    db: t.db,
    queue,
    clock,
    fetch,
    secretsKey: DEV_SECRETS_KEY,
    timeoutMs: TIMEOUT_MS,
    retryDelaysSeconds: [30, 120],
    log: consoleLogger,
  };
  const ours = async () => (await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, owner.tenantId))).map((d) => d.id);
  /** Runs every queued delivery message (and what they enqueue) that belongs to this tenant. */
  async function pump() {
    const mine = new Set(await ours());
    for (let i = 0; i < 100 && queue.messages.length > 0; i++) {
      const { body } = queue.messages.shift()!;
      for (const item of itemsOf(body)) if (item.kind === "delivery" && mine.has(item.deliveryId)) await processDeliveryMessage(deps, item);
    }
  }
  return { owner, queue, clock, deps, received, pump, ours };
}

describe("recovery of lost messages", () => {
  test("relayed deliveries whose messages died are re-sent once a lease is over, by one pass of several, and delivered once", async () => {
    const s = await setup();
    expect(sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery")).toHaveLength(3);
    s.queue.messages.length = 0; // the process died with its queue: every message lost

    // Within the lease: still possibly in the queue, nothing is re-sent.
    s.clock.advance(LEASE - 1_000);
    expect(await requeueStalledDeliveries(s.deps, LEASE)).toBe(0);
    // Past it: re-sent, once, however many passes overlap.
    s.clock.advance(2_000);
    const counts = await Promise.all([requeueStalledDeliveries(s.deps, LEASE), requeueStalledDeliveries(s.deps, LEASE)]);
    const mine = new Set(await s.ours());
    const resent = sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery" && mine.has(m.body.deliveryId));
    expect(resent).toHaveLength(3);
    expect(counts[0]! + counts[1]!).toBeGreaterThanOrEqual(3);
    // The pass renewed their lease: the next pass re-sends nothing until it runs out again.
    expect(await requeueStalledDeliveries(s.deps, LEASE)).toBe(0);

    await s.pump();
    expect(s.received).toHaveLength(3);
    expect(new Set(s.received).size).toBe(3);
    const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, s.owner.tenantId));
    expect(rows.map((d) => [d.status, d.attemptCount])).toEqual(Array(3).fill(["SUCCEEDED", 1]));
  });

  test("an attempt whose worker died mid-request: counted as interrupted after its lease, the next attempt goes at once", async () => {
    const s = await setup();
    const [deliveryId] = await s.ours();
    s.queue.messages.length = 0;
    // The dead worker's claim of attempt 1, just now; its outcome never recorded.
    await t.db.insert(webhookAttempts).values({ id: newId(), tenantId: s.owner.tenantId, deliveryId: deliveryId!, attempt: 1, startedAt: s.clock.now() });

    s.clock.advance(LEASE + 1_000);
    await requeueStalledDeliveries(s.deps, LEASE);
    await s.pump();
    const attempts = await t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId!)).orderBy(webhookAttempts.attempt);
    expect(attempts.map((a) => [a.attempt, a.succeeded, a.error])).toEqual([
      [1, false, "interrupted before its outcome was recorded"],
      [2, true, null],
    ]);
    const [row] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId!));
    expect([row!.status, row!.attemptCount]).toEqual(["SUCCEEDED", 2]);
  });

  test("a duplicate of an attempt still within its lease waits for it: never two requests at once", async () => {
    let release!: () => void;
    let inFlight = 0;
    let most = 0;
    const s = await setup(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => (release = r));
      inFlight--;
      return new Response("ok");
    });
    const [first] = sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery");
    const msg = first!.body as { kind: "delivery"; deliveryId: string; attempt: number };
    const running = processDeliveryMessage(s.deps, msg);
    await Bun.sleep(20);
    // The recovery pass finds it overdue by a lease (its message duplicated meanwhile): the copy waits.
    s.clock.advance(LEASE - 2_000);
    expect(await processDeliveryMessage(s.deps, msg)).toEqual({ ack: false, retryInSeconds: 2 });
    expect(most).toBe(1);
    release();
    await running;
    expect(s.received).toHaveLength(1);
  });

  test("owner e-mails whose message died are re-sent after the lease and sent once", async () => {
    const s = await setup();
    const mails = await t.db.select().from(notifications).where(eq(notifications.tenantId, s.owner.tenantId));
    expect(mails.length).toBeGreaterThan(0);
    expect(mails.every((n) => n.emailStatus === "PENDING" && n.emailNextAttemptAt !== null)).toBe(true);
    s.queue.messages.length = 0;
    s.clock.advance(LEASE + 1_000);
    await requeueStalledDeliveries(s.deps, LEASE);
    const ids = new Set(mails.map((n) => n.id));
    const resent = sentItems(s.queue.messages).filter((m) => m.body.kind === "email" && ids.has(m.body.notificationId));
    expect(resent).toHaveLength(mails.length);
    const mail = { db: t.db, mail: databaseMailbox(t.db), clock: s.clock };
    for (const m of resent) await sendNotificationEmail(mail, (m.body as { notificationId: string }).notificationId);
    for (const m of resent) await sendNotificationEmail(mail, (m.body as { notificationId: string }).notificationId);
    const after = await t.db.select().from(notifications).where(eq(notifications.tenantId, s.owner.tenantId));
    expect(after.map((n) => [n.emailStatus, n.emailAttempts])).toEqual(Array(mails.length).fill(["SENT", 1]));
  });
});

describe("D1 failing under a delivery", () => {
  test("a claim that committed but whose answer was lost is still ours: the event goes out once", async () => {
    const s = await setup();
    const flaky = createDb(faultyLibsql(t.client, { rate: 1, when: "after", match: 'insert into "webhook_attempts"', limit: 1 }));
    const [first] = sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery");
    const outcome = await processDeliveryMessage({ ...s.deps, db: flaky }, first!.body as never);
    expect(outcome).toEqual({ ack: true });
    expect(s.received).toHaveLength(1);
    const [row] = await t.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, (first!.body as { deliveryId: string }).deliveryId));
    expect([row!.status, row!.attemptCount]).toEqual(["SUCCEEDED", 1]);
  });

  test("recording an attempt's outcome is retried through transient failures: recorded once, no attempt spent", async () => {
    const s = await setup();
    const flaky = createDb(faultyLibsql(t.client, { rate: 1, when: "before", match: 'update "webhook_attempts"', limit: 2 }));
    const [first] = sentItems(s.queue.messages).filter((m) => m.body.kind === "delivery");
    const deliveryId = (first!.body as { deliveryId: string }).deliveryId;
    expect(await processDeliveryMessage({ ...s.deps, db: flaky }, first!.body as never)).toEqual({ ack: true });
    const attempts = await t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId));
    expect(attempts.map((a) => [a.attempt, a.succeeded])).toEqual([[1, true]]);
    const [row] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    expect([row!.status, row!.attemptCount]).toEqual(["SUCCEEDED", 1]);
  });
});
