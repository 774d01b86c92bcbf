import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { webhookAttempts, webhookDeliveries } from "../../../../db/schema/webhooks.ts";
import { newId } from "../../../../shared/domain/ids.ts";
import { processDeliveryMessage } from "../../../../shared/webhooks/deliver.ts";
import type { memoryDeliveryQueue } from "../../../../shared/webhooks/memory-queue.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
let queue: ReturnType<typeof memoryDeliveryQueue>;
beforeAll(async () => {
  t = await createTestApp();
  queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
});
afterAll(() => t.close());

const history = (headers: Record<string, string>, query = "") => t.request("GET", `/v1/webhooks/deliveries${query}`, { headers });
const redeliver = (headers: Record<string, string>, id: string) => t.request("POST", `/v1/webhooks/deliveries/${id}/redeliver`, { headers });

/** A tenant with one endpoint subscribed to everything, and a funded loan: 3 deliveries, PENDING. */
async function tenantWithDeliveries(url = "https://hooks.merchant.example/svc") {
  const m = await sandboxTenant(t);
  const endpoint = (await t.request("POST", "/v1/webhooks", { body: { url, events: ["*"] }, headers: apiKey(m.key) })).body;
  const loan = await createdLoan(t, m.key);
  const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id)).orderBy(asc(webhookDeliveries.createdAt));
  return { ...m, endpoint, loan, deliveries: rows };
}

/** What the consumer records for a finished delivery: its attempts and its final state. */
async function finish(deliveryId: string, outcome: "FAILED" | "SUCCEEDED") {
  const base = t.clock.now().getTime();
  const attempts =
    outcome === "FAILED"
      ? [
          { attempt: 1, responseStatus: 500, error: "HTTP 500" },
          { attempt: 2, responseStatus: null, error: "no answer within 10000 ms" },
          { attempt: 3, responseStatus: null, error: "network error: connection reset" },
        ]
      : [{ attempt: 1, responseStatus: 204, error: null }];
  const [d] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
  for (const a of attempts) {
    await t.db.insert(webhookAttempts).values({
      id: newId(),
      tenantId: d!.tenantId,
      deliveryId,
      attempt: a.attempt,
      startedAt: new Date(base + a.attempt * 1000),
      finishedAt: new Date(base + a.attempt * 1000 + 120),
      durationMs: 120,
      responseStatus: a.responseStatus,
      error: a.error,
      succeeded: a.error === null,
    });
  }
  await t.db
    .update(webhookDeliveries)
    .set({ status: outcome, attemptCount: attempts.length, nextAttemptAt: null, updatedAt: new Date(base + 5000) })
    .where(eq(webhookDeliveries.id, deliveryId));
}

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
  expect(res.body.message).toHaveLength(fields.length);
};

describe("delivery history: happy path", () => {
  test("each delivery with its event, endpoint, status and attempts, newest first", async () => {
    const m = await tenantWithDeliveries();
    expect(m.deliveries.map((d) => d.eventType).sort()).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    const [failed, succeeded, pending] = m.deliveries;
    await finish(failed!.id, "FAILED");
    await finish(succeeded!.id, "SUCCEEDED");

    const res = await history(apiKey(m.key));
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data).toHaveLength(3);
    const byId = new Map(res.body.data.map((d: { id: string }) => [d.id, d]));
    const base = t.clock.now().getTime();
    const at = (ms: number) => new Date(base + ms).toISOString();
    expect(byId.get(failed!.id)).toEqual({
      id: failed!.id,
      eventId: failed!.eventId,
      eventType: failed!.eventType,
      endpointId: m.endpoint.id,
      url: m.endpoint.url,
      status: "FAILED",
      attemptCount: 3,
      nextAttemptAt: null,
      redeliveryOf: null,
      createdAt: failed!.createdAt.toISOString(),
      updatedAt: at(5000),
      attempts: [
        { attempt: 1, startedAt: at(1000), finishedAt: at(1120), durationMs: 120, responseStatus: 500, error: "HTTP 500", succeeded: false },
        { attempt: 2, startedAt: at(2000), finishedAt: at(2120), durationMs: 120, responseStatus: null, error: "no answer within 10000 ms", succeeded: false },
        {
          attempt: 3,
          startedAt: at(3000),
          finishedAt: at(3120),
          durationMs: 120,
          responseStatus: null,
          error: "network error: connection reset",
          succeeded: false,
        },
      ],
    });
    expect(byId.get(succeeded!.id)).toMatchObject({
      status: "SUCCEEDED",
      attemptCount: 1,
      attempts: [{ attempt: 1, startedAt: at(1000), finishedAt: at(1120), durationMs: 120, responseStatus: 204, error: null, succeeded: true }],
    });
    expect(byId.get(pending!.id)).toMatchObject({ status: "PENDING", attemptCount: 0, nextAttemptAt: pending!.nextAttemptAt!.toISOString(), attempts: [] });
    // The event ids are the loan's events.
    const events = (await t.request("GET", `/v1/events?loanId=${m.loan.id}`, { headers: apiKey(m.key) })).body.data;
    expect(res.body.data.map((d: { eventId: string }) => d.eventId).sort()).toEqual(events.map((e: { id: string }) => e.id).sort());
  });

  test("newest first across loans, walked with limit and cursor", async () => {
    const m = await tenantWithDeliveries();
    t.clock.advance(10);
    await createdLoan(t, m.key);
    t.clock.advance(10);
    await createdLoan(t, m.key);
    const all = (await history(apiKey(m.key), "?limit=100")).body.data;
    expect(all).toHaveLength(9);
    const created = all.map((d: { createdAt: string }) => d.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await history(apiKey(m.key), `?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...res.body.data.map((d: { id: string }) => d.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((d: { id: string }) => d.id));
  });

  test("filters: endpointId, status, eventType, and together", async () => {
    const m = await tenantWithDeliveries();
    const other = (
      await t.request("POST", "/v1/webhooks", { body: { url: "https://other.merchant.example/", events: ["loan.funded"] }, headers: apiKey(m.key) })
    ).body;
    await createdLoan(t, m.key); // 3 more to the first endpoint, 1 to the other
    const [first] = m.deliveries;
    await finish(first!.id, "FAILED");

    const ids = async (query: string) => (await history(apiKey(m.key), query)).body.data.map((d: { id: string }) => d.id);
    const of = async (query: string) => (await history(apiKey(m.key), query)).body.data;
    expect(await ids("")).toHaveLength(7);
    expect((await of(`?endpointId=${other.id}`)).map((d: any) => [d.endpointId, d.eventType])).toEqual([[other.id, "loan.funded"]]);
    expect(await of(`?endpointId=${m.endpoint.id}`)).toHaveLength(6);
    expect(await ids("?status=FAILED")).toEqual([first!.id]);
    expect(await ids("?status=PENDING")).toHaveLength(6);
    expect(await ids("?status=SUCCEEDED")).toEqual([]);
    expect((await of("?eventType=loan.funded")).map((d: any) => d.eventType)).toEqual(["loan.funded", "loan.funded", "loan.funded"]);
    expect(await of(`?eventType=loan.funded&endpointId=${other.id}&status=PENDING`)).toHaveLength(1);
    expect(await ids(`?eventType=${first!.eventType}&status=FAILED&endpointId=${m.endpoint.id}`)).toEqual([first!.id]);
    expect(await ids("?eventType=webhook.delivery_failed")).toEqual([]);
  });

  test("deliveries to a deleted endpoint stay in the history", async () => {
    const m = await tenantWithDeliveries();
    expect((await t.request("DELETE", `/v1/webhooks/${m.endpoint.id}`, { headers: apiKey(m.key) })).status).toBe(204);
    const res = await history(apiKey(m.key), `?endpointId=${m.endpoint.id}`);
    expect(res.body.data).toHaveLength(3);
    expect(res.body.data[0].url).toBe(m.endpoint.url);
  });
});

describe("redelivery", () => {
  test("a FAILED delivery: a new PENDING delivery of the same event, enqueued for attempt 1", async () => {
    const m = await tenantWithDeliveries();
    const original = m.deliveries[0]!;
    await finish(original.id, "FAILED");
    t.clock.advance(1);
    const res = await redeliver(apiKey(m.key), original.id);
    expect(res.status).toBe(201);
    const now = t.clock.now().toISOString();
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      eventId: original.eventId,
      eventType: original.eventType,
      endpointId: m.endpoint.id,
      url: m.endpoint.url,
      status: "PENDING",
      attemptCount: 0,
      nextAttemptAt: now,
      redeliveryOf: original.id,
      createdAt: now,
      updatedAt: now,
      attempts: [],
    });
    expect(res.body.id).not.toBe(original.id);
    expect(queue.messages.filter((msg) => msg.body.kind === "delivery" && msg.body.deliveryId === res.body.id)).toEqual([
      { body: { kind: "delivery", deliveryId: res.body.id, attempt: 1 }, delaySeconds: undefined },
    ]);
    // The history shows it on top; the original is unchanged.
    const list = (await history(apiKey(m.key))).body.data;
    expect(list[0]).toEqual(res.body);
    expect(list.find((d: { id: string }) => d.id === original.id)).toMatchObject({ status: "FAILED", attemptCount: 3, redeliveryOf: null });
  });

  test("a SUCCEEDED delivery can be redelivered too, and so can a finished redelivery", async () => {
    const m = await tenantWithDeliveries();
    const original = m.deliveries[1]!;
    await finish(original.id, "SUCCEEDED");
    const first = await redeliver(bearer(m.token), original.id);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ eventId: original.eventId, redeliveryOf: original.id, status: "PENDING" });
    await finish(first.body.id, "FAILED");
    const second = await redeliver(apiKey(m.key), first.body.id);
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ eventId: original.eventId, redeliveryOf: first.body.id });
  });

  test("one redelivery at a time: while one of the event to the endpoint is in progress, another is 409 (racing ones too), and none is made", async () => {
    const m = await tenantWithDeliveries();
    const original = m.deliveries[1]!;
    await finish(original.id, "SUCCEEDED");
    const racing = await Promise.all([0, 1, 2].map(() => redeliver(apiKey(m.key), original.id)));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const made = racing.find((r) => r.status === 201)!.body.id as string;
    for (const refused of racing.filter((r) => r.status === 409)) {
      expect(refused.body).toEqual({
        statusCode: 409,
        message: `A delivery of this event to this endpoint is in progress (${made}); redeliver once it has finished`,
        error: "Conflict",
      });
    }
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.redeliveryOf, original.id))).toHaveLength(1);
    // Once it has finished, the next one goes.
    await finish(made, "SUCCEEDED");
    expect((await redeliver(apiKey(m.key), original.id)).status).toBe(201);
  });

  test("the redelivery carries the same event id (`webhook-id`, envelope `id`) with valid signatures", async () => {
    const m = await tenantWithDeliveries();
    const original = m.deliveries[2]!;
    await finish(original.id, "FAILED");
    const created = (await redeliver(apiKey(m.key), original.id)).body;
    const received: { url: string; headers: Record<string, string>; body: string }[] = [];
    const fakeFetch = (async (url: string, init: RequestInit) => {
      received.push({ url, headers: init.headers as Record<string, string>, body: init.body as string });
      return new Response(null, { status: 204 });
    }) as unknown as typeof fetch;
    await processDeliveryMessage(
      { db: t.db, queue, clock: t.clock, fetch: fakeFetch, secretsKey: t.deps.secretsKey, timeoutMs: 10_000, retryDelaysSeconds: [30, 120], log: t.deps.log },
      { deliveryId: created.id, attempt: 1 },
    );
    expect(received).toHaveLength(1);
    const [{ url, headers, body }] = received as [(typeof received)[0]];
    expect(url).toBe(m.endpoint.url);
    expect(headers["webhook-id"]).toBe(original.eventId);
    expect(headers["x-svc-delivery"]).toBe(created.id);
    expect(JSON.parse(body).id).toBe(original.eventId);
    expect(headers["x-svc-signature"]).toBe(createHmac("sha256", m.endpoint.secret).update(body).digest("hex"));
    const after = (await history(apiKey(m.key))).body.data.find((d: { id: string }) => d.id === created.id);
    expect(after).toMatchObject({ status: "SUCCEEDED", attemptCount: 1, attempts: [{ attempt: 1, responseStatus: 204, succeeded: true }] });
  });
});

describe("delivery history and redelivery: errors", () => {
  test.each([
    ["an unknown status", "?status=DONE", "status"],
    ["an unknown event type", "?eventType=loan.created", "eventType"],
    ["an endpointId that is no UUID", "?endpointId=abc", "endpointId"],
    ["limit 0", "?limit=0", "limit"],
    ["limit 101", "?limit=101", "limit"],
    ["a cursor this service never issued", "?cursor=nope", "cursor"],
  ])("%s: 400 naming it", async (_name, query, field) => {
    const m = await sandboxTenant(t);
    expectFieldErrors(await history(apiKey(m.key), query), field);
  });

  test("a PENDING delivery: 409, and nothing is created or enqueued", async () => {
    const m = await tenantWithDeliveries();
    const before = queue.messages.length;
    const res = await redeliver(apiKey(m.key), m.deliveries[0]!.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      statusCode: 409,
      message: "The delivery is still in progress; redeliver it once it has SUCCEEDED or FAILED",
      error: "Conflict",
    });
    expect(queue.messages.length).toBe(before);
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.redeliveryOf, m.deliveries[0]!.id))).toEqual([]);
  });

  test("a delivery whose endpoint was deleted: 409", async () => {
    const m = await tenantWithDeliveries();
    await finish(m.deliveries[0]!.id, "FAILED");
    await t.request("DELETE", `/v1/webhooks/${m.endpoint.id}`, { headers: apiKey(m.key) });
    const res = await redeliver(apiKey(m.key), m.deliveries[0]!.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ statusCode: 409, message: "The delivery's webhook endpoint was deleted", error: "Conflict" });
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.redeliveryOf, m.deliveries[0]!.id))).toEqual([]);
  });

  test("an unknown delivery or a non-UUID: 404", async () => {
    const m = await sandboxTenant(t);
    for (const id of [crypto.randomUUID(), "nope"]) {
      const res = await redeliver(apiKey(m.key), id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Webhook delivery not found", error: "Not Found" });
    }
  });
});

describe("delivery history and redelivery: security", () => {
  test("no credentials: 401", async () => {
    expect((await t.request("GET", "/v1/webhooks/deliveries")).status).toBe(401);
    expect((await t.request("POST", `/v1/webhooks/deliveries/${crypto.randomUUID()}/redeliver`)).status).toBe(401);
  });

  test("a MEMBER may read the history but not redeliver (403); an ADMIN may", async () => {
    const m = await tenantWithDeliveries();
    await finish(m.deliveries[0]!.id, "FAILED");
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const read = await history(bearer(member.token));
    expect(read.status).toBe(200);
    expect(read.body.data).toHaveLength(3);
    const denied = await redeliver(bearer(member.token), m.deliveries[0]!.id);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("Forbidden");
    const admin = await addUserWithRole(t, m.token, "ADMIN");
    expect((await redeliver(bearer(admin.token), m.deliveries[0]!.id)).status).toBe(201);
  });

  test("tenants never see or redeliver each other's deliveries", async () => {
    const a = await tenantWithDeliveries();
    const b = await sandboxTenant(t);
    await finish(a.deliveries[0]!.id, "FAILED");
    expect((await history(apiKey(b.key))).body).toEqual({ data: [], nextCursor: null });
    expect((await history(apiKey(b.key), `?endpointId=${a.endpoint.id}`)).body).toEqual({ data: [], nextCursor: null });
    const res = await redeliver(apiKey(b.key), a.deliveries[0]!.id);
    expect(res.status).toBe(404);
    expect(
      await t.db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.redeliveryOf, a.deliveries[0]!.id))),
    ).toEqual([]);
    const aPage = await history(apiKey(a.key), "?limit=1");
    expect((await history(apiKey(b.key), `?cursor=${aPage.body.nextCursor}`)).body.data).toEqual([]);
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error") || line.includes("relay after write failed"))).toEqual([]);
  });
});
