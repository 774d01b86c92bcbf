import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { events } from "../../../../db/schema/events.ts";
import { notifications, webhookDeliveries } from "../../../../db/schema/webhooks.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";
import { processDeliveryMessage } from "../../../../shared/webhooks/deliver.ts";
import type { memoryDeliveryQueue } from "../../../../shared/webhooks/memory-queue.ts";
import { relayOutbox } from "../../../../shared/webhooks/relay-outbox.ts";

/**
 * POST /v1/webhooks/:id/test: one `webhook.test` event to one endpoint, with
 * its delivery in the history; never fanned out, never a notification, and a
 * failure raises no `webhook.delivery_failed`.
 */
let t: TestApp;
let queue: ReturnType<typeof memoryDeliveryQueue>;
beforeAll(async () => {
  t = await createTestApp();
  queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
});
afterAll(() => t.close());

const sendTest = (headers: Record<string, string>, id: string) => t.request("POST", `/v1/webhooks/${id}/test`, { headers });
const register = async (headers: Record<string, string>, body: Record<string, unknown>) => (await t.request("POST", "/v1/webhooks", { body, headers })).body;
const deliver = (fetchImpl: typeof fetch, deliveryId: string, attempt = 1) =>
  processDeliveryMessage(
    { db: t.db, queue, clock: t.clock, fetch: fetchImpl, secretsKey: t.deps.secretsKey, timeoutMs: 10_000, retryDelaysSeconds: [30, 120], log: t.deps.log },
    { deliveryId, attempt },
  );

describe("POST /v1/webhooks/:id/test", () => {
  test("a dashboard session sends a signed webhook.test to that endpoint only (even one not subscribed to it); the history shows it; no other endpoint, no notification", async () => {
    const m = await sandboxTenant(t);
    const target = await register(bearer(m.token), { url: "https://hooks.merchant.example/a", events: ["loan.funded"] });
    const other = await register(bearer(m.token), { url: "https://hooks.merchant.example/b", events: ["*"] });

    const res = await sendTest(bearer(m.token), target.id);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      eventType: "webhook.test",
      endpointId: target.id,
      url: target.url,
      status: "PENDING",
      attemptCount: 0,
      redeliveryOf: null,
      attempts: [],
    });
    expect(queue.messages.at(-1)!.body).toEqual({ kind: "delivery", deliveryId: res.body.id, attempt: 1 });

    // The relay never sees it: no delivery to the other endpoint, no notification.
    await relayOutbox({ db: t.db, queue }, { now: t.clock.now(), tenantId: m.tenantId });
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, other.id))).toEqual([]);
    expect(
      await t.db
        .select()
        .from(notifications)
        .where(and(eq(notifications.tenantId, m.tenantId), eq(notifications.eventId, res.body.eventId))),
    ).toEqual([]);

    const received: { headers: Record<string, string>; body: string }[] = [];
    const ok = (async (_url: string, init: RequestInit) => {
      received.push({ headers: init.headers as Record<string, string>, body: init.body as string });
      return new Response(null, { status: 204 });
    }) as unknown as typeof fetch;
    await deliver(ok, res.body.id);
    const [{ headers, body }] = received as [(typeof received)[0]];
    expect(headers["x-svc-event"]).toBe("webhook.test");
    expect(headers["webhook-id"]).toBe(res.body.eventId);
    expect(headers["x-svc-signature"]).toBe(createHmac("sha256", target.secret).update(body).digest("hex"));
    expect(JSON.parse(body)).toMatchObject({
      id: res.body.eventId,
      type: "webhook.test",
      tenantId: m.tenantId,
      mode: "sandbox",
      data: { test: true, endpoint: { id: target.id, url: target.url } },
      program: null,
      channel: null,
    });

    const history = await t.request("GET", "/v1/webhooks/deliveries?eventType=webhook.test", { headers: bearer(m.token) });
    expect(history.body.data).toEqual([
      expect.objectContaining({
        id: res.body.id,
        status: "SUCCEEDED",
        attempts: [expect.objectContaining({ attempt: 1, responseStatus: 204, succeeded: true })],
      }),
    ]);
    const listed = await t.request("GET", "/v1/events?type=webhook.test", { headers: bearer(m.token) });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([res.body.eventId]);
  });

  test("on a sandbox clock moved ahead, the event is dated on it and its delivery on the system clock (as the relay's), so a lost message is sent again within the lease", async () => {
    const m = await sandboxTenant(t);
    const target = await register(bearer(m.token), { url: "https://hooks.merchant.example/clocked", events: ["*"] });
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 8 * 86_400 }, headers: apiKey(m.key) })).status).toBe(200);
    const before = t.clock.now().getTime();
    const res = await sendTest(bearer(m.token), target.id);
    expect(res.status).toBe(201);
    // The delivery: created and due now on the system clock (before, 8 days ahead: the recovery pass would not have resent it for 8 days).
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(res.body.createdAt)).toBeLessThan(before + 60_000);
    expect(res.body.nextAttemptAt).toBe(res.body.createdAt);
    // The event: on the tenant's sandbox clock, as every event of the mode.
    const [event] = await t.db.select().from(events).where(eq(events.id, res.body.eventId));
    expect(Date.parse(event!.envelope.createdAt)).toBeGreaterThanOrEqual(before + 8 * 86_400_000);
  });

  test("a failed test event raises no webhook.delivery_failed", async () => {
    const m = await sandboxTenant(t);
    const target = await register(apiKey(m.key), { url: "https://hooks.merchant.example/down", events: ["*"] });
    const res = await sendTest(apiKey(m.key), target.id);
    const down = (async () => new Response("no", { status: 500 })) as unknown as typeof fetch;
    for (const attempt of [1, 2, 3]) await deliver(down, res.body.id, attempt);
    const [row] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, res.body.id));
    expect(row!.status).toBe("FAILED");
    expect(
      await t.db
        .select()
        .from(events)
        .where(and(eq(events.tenantId, m.tenantId), eq(events.type, "webhook.delivery_failed"))),
    ).toEqual([]);
  });

  test("one test event on its way to an endpoint at a time (its first attempt goes out even while the endpoint is paused): another is 409 until that attempt has finished, whatever its outcome; another endpoint's is not held up", async () => {
    const m = await sandboxTenant(t);
    const target = await register(apiKey(m.key), { url: "https://hooks.merchant.example/twice", events: ["*"] });
    const other = await register(apiKey(m.key), { url: "https://hooks.merchant.example/other", events: ["*"] });
    const first = await sendTest(apiKey(m.key), target.id);
    expect(first.status).toBe(201);
    const again = await sendTest(apiKey(m.key), target.id);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ statusCode: 409, error: "Conflict", message: expect.stringContaining("on its way") });
    expect((await sendTest(apiKey(m.key), other.id)).status).toBe(201);
    // Nothing half-written by the refusal: one test event and one delivery to the endpoint.
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, target.id))).toHaveLength(1);
    // Its first attempt failed: the next one may go.
    await deliver((async () => new Response("no", { status: 500 })) as unknown as typeof fetch, first.body.id);
    expect((await sendTest(apiKey(m.key), target.id)).status).toBe(201);
  });

  test("404 for a deleted endpoint, another tenant's, or (API key) the other mode's; 403 for a MEMBER; 401 without credentials", async () => {
    const m = await sandboxTenant(t);
    const stranger = await sandboxTenant(t);
    const mine = await register(bearer(m.token), { url: "https://hooks.merchant.example/x", events: ["*"] });
    const live = await register(bearer(m.token), { url: "https://hooks.merchant.example/live", events: ["*"], mode: "live" });
    const notFound = { statusCode: 404, message: "Webhook endpoint not found", error: "Not Found" };

    expect(await sendTest(bearer(stranger.token), mine.id)).toMatchObject({ status: 404, body: notFound });
    expect(await sendTest(apiKey(m.key), live.id)).toMatchObject({ status: 404, body: notFound });
    const member = await addUserWithRole(t, m.token, "MEMBER");
    expect((await sendTest(bearer(member.token), mine.id)).status).toBe(403);
    expect((await t.request("POST", `/v1/webhooks/${mine.id}/test`)).status).toBe(401);
    expect(await sendTest(bearer(m.token), "not-a-uuid")).toMatchObject({ status: 404, body: notFound });

    await t.request("DELETE", `/v1/webhooks/${mine.id}`, { headers: bearer(m.token) });
    expect(await sendTest(bearer(m.token), mine.id)).toMatchObject({ status: 404, body: notFound });
  });
});
