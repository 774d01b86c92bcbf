import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import { signUpMerchant, startTestStack, type StackResponse, type TestStack } from "./integration.ts";

/**
 * Webhooks end to end on workerd (issue 4's acceptance; SPEC.md "Events",
 * scenarios "Happy path" and "Webhook outage"; DECISIONS.md "Webhooks,
 * notifications"): the api worker relays each write's events to the real
 * Queue, the webhooks worker POSTs them to receivers running in this process,
 * and the receivers check every signature the way a merchant would. Retry
 * delays are 1 s and the timeout 1 s, so three attempts take seconds. Each
 * test signs up its own tenants and starts its own receivers.
 */
describe("webhooks on workerd", () => {
  let stack: TestStack;
  let n = 0;
  const TIMEOUT_MS = 1000;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    stack = await startTestStack({
      ratelimits: { IP_LIMITER: { limit: 1_000_000 }, API_KEY_LIMITER: { limit: 1_000_000 } },
      vars: { WEBHOOK_RETRY_DELAYS_SECONDS: "1,1", WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await stack?.dispose();
  });

  /**
   * `toMatchObject` on a copy: Bun 1.4.5's `toMatchObject` writes its
   * asymmetric matchers (`expect.any`, `expect.stringMatching`) into the
   * received object, which would corrupt values the test goes on to use.
   */
  const expectShape = (value: unknown, shape: Record<string, unknown>) => expect(structuredClone(value)).toMatchObject(shape);

  // ---------------------------------------------------------------- receivers

  type Envelope = { id: string; type: string; createdAt: string; tenantId: string; data: any; program: string | null; channel: string | null };
  /** One request as a receiver saw it, with what it answered (null: never answered, or the connection was reset). */
  type Hit = { raw: string; envelope: Envelope; headers: Record<string, string>; answered: number | null; arrivedAt: number };
  type Answer = number | "hang";
  type Receiver = {
    url: string;
    hits: Hit[];
    /** Set once the endpoint is registered: from then on every request's signatures are checked. */
    secret?: string;
    answer: () => Answer;
    stop(): Promise<void>;
  };

  /**
   * What a merchant's receiver does (SPEC.md "Events"): recompute
   * `x-svc-signature` over the raw body with its own HMAC, and the Standard
   * Webhooks `webhook-signature` over `id.timestamp.body` with the decoded
   * `whsec_` key, rejecting stale timestamps; any mismatch is a 401.
   */
  function signatureProblem(secret: string, headers: Record<string, string>, raw: string): string | null {
    const hex = createHmac("sha256", secret).update(raw).digest("hex");
    const given = headers["x-svc-signature"] ?? "";
    if (given.length !== hex.length || !timingSafeEqual(Buffer.from(given), Buffer.from(hex))) return "x-svc-signature mismatch";

    const id = headers["webhook-id"];
    const timestamp = Number(headers["webhook-timestamp"]);
    if (!id || !Number.isInteger(timestamp)) return "missing webhook-id or webhook-timestamp";
    if (Math.abs(Date.now() / 1000 - timestamp) > 300) return "webhook-timestamp outside the tolerance";
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${raw}`).digest("base64");
    const candidates = (headers["webhook-signature"] ?? "").split(" ").map((s) => s.replace(/^v1,/, ""));
    const ok = candidates.some((c) => c.length === expected.length && timingSafeEqual(Buffer.from(c), Buffer.from(expected)));
    return ok ? null : "webhook-signature mismatch";
  }

  /** A receiver on Bun.serve that answers `answer()` (or holds the request open, for "hang") once the signatures check out. */
  function startReceiver(answer: () => Answer = () => 200): Receiver {
    const pending: (() => void)[] = [];
    const receiver: Receiver = {
      url: "",
      hits: [],
      answer,
      async stop() {
        for (const release of pending) release();
        server.stop(true);
      },
    };
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const raw = await req.text();
        const headers = Object.fromEntries(req.headers);
        const hit: Hit = { raw, envelope: JSON.parse(raw), headers, answered: null, arrivedAt: Date.now() };
        receiver.hits.push(hit);
        if (receiver.secret && signatureProblem(receiver.secret, headers, raw)) {
          hit.answered = 401;
          return new Response("bad signature", { status: 401 });
        }
        const status = receiver.answer();
        if (status === "hang") return new Promise<Response>((resolve) => pending.push(() => resolve(new Response(null, { status: 204 }))));
        hit.answered = status;
        return new Response(status < 300 ? "ok" : "boom", { status });
      },
    });
    receiver.url = `http://127.0.0.1:${server.port}/hooks/svc`;
    receivers.push(receiver);
    return receiver;
  }

  /** A receiver whose TCP server resets every connection as soon as the request arrives. */
  async function startResettingReceiver(): Promise<{ url: string; connections: number; requests: number; stop(): Promise<void> }> {
    const sockets = new Set<Socket>();
    const state = { url: "", connections: 0, requests: 0, stop: async () => {} };
    const server = createServer((socket) => {
      state.connections++;
      sockets.add(socket);
      socket.once("data", () => {
        state.requests++;
        socket.destroy();
      });
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    state.url = `http://127.0.0.1:${address.port}/hooks/svc`;
    state.stop = () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    receivers.push({ url: state.url, hits: [], answer: () => 200, stop: state.stop });
    return state;
  }

  // ---------------------------------------------------------------- merchants

  type Merchant = Awaited<ReturnType<typeof newMerchant>>;

  /** Signup → API key → /v1/me (workers/local/integration.ts). */
  const newMerchant = () => signUpMerchant(stack, "Hooks");

  /** `POST /v1/webhooks`; the receiver learns the secret (shown once) and checks every signature from then on. */
  async function register(m: Merchant, receiver: { url: string; secret?: string }, events: string[]) {
    const res = await m.api("/v1/webhooks", { json: { url: receiver.url, events } });
    expect(res.status).toBe(201);
    expectShape(res.body, { id: expect.any(String), url: receiver.url, events, secret: expect.stringMatching(/^whsec_/) });
    receiver.secret = res.body.secret;
    return res.body as { id: string; secret: string };
  }

  async function createLoan(m: Merchant, principalAmount = "100.00") {
    const res = await m.api("/v1/loans", {
      json: {
        loanProductId: m.loanProductId,
        borrowerRef: `borrower-${++n}`,
        borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
        chain: "POLYGON_AMOY",
        principalAmount,
        idempotencyKey: `order-${crypto.randomUUID()}`,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("ACTIVE");
    return res.body as { id: string };
  }

  /** Every delivery of `GET /v1/webhooks/deliveries?<query>`, following the cursor. */
  async function deliveriesOf(m: Merchant, query: string): Promise<any[]> {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const res: StackResponse = await m.api(`/v1/webhooks/deliveries?limit=100&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      all.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    return all;
  }

  /** Polls `probe` until it returns a truthy value; `tick` fires the cron worker (relay safety net) between polls. */
  async function until<T>(
    what: string,
    probe: () => Promise<T | false | null | undefined> | T | false | null | undefined,
    opts: { timeoutMs?: number; intervalMs?: number; tick?: boolean; state?: () => Promise<string> } = {},
  ): Promise<T> {
    const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${opts.state ? ` (${await opts.state()})` : ""}`);
      if (opts.tick) await stack.scheduled();
      await Bun.sleep(opts.intervalMs ?? 100);
    }
  }

  const settledDeliveries = (m: Merchant, query: string, count: number) =>
    until(
      `${count} settled deliveries (${query})`,
      async () => {
        const list = await deliveriesOf(m, query);
        return list.length === count && list.every((d) => d.status !== "PENDING") && list;
      },
      { timeoutMs: 30_000 },
    );

  function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
    const groups = new Map<string, T[]>();
    for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
    return groups;
  }

  // ---------------------------------------------------------------- tests

  test("Happy path: every delivery carries valid signatures; application_submitted, decision, funded arrive for one loan id, each SUCCEEDED in 1 attempt", async () => {
    const m = await newMerchant();
    const receiver = startReceiver();
    const endpoint = await register(m, receiver, ["*"]);
    const loan = await createLoan(m);

    const history = await settledDeliveries(m, `endpointId=${endpoint.id}`, 3);
    const hits = receiver.hits;
    expect(hits).toHaveLength(3);
    // The receiver's own checks passed for every request: it never had to answer 401.
    expect(hits.map((h) => h.answered)).toEqual([200, 200, 200]);

    const byCreatedAt = [...hits].sort((a, b) => Date.parse(a.envelope.createdAt) - Date.parse(b.envelope.createdAt));
    expect(byCreatedAt.map((h) => h.envelope.type)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    const [submitted, decision] = byCreatedAt;
    expect(Date.parse(submitted!.envelope.createdAt)).toBeLessThan(Date.parse(decision!.envelope.createdAt));

    for (const hit of hits) {
      const { envelope, headers } = hit;
      expect(Object.keys(envelope).sort()).toEqual(["channel", "createdAt", "data", "id", "mode", "program", "tenantId", "type"]);
      expect(envelope).toMatchObject({ tenantId: m.tenantId, program: null, channel: null });
      expect(envelope.data.loan.id).toBe(loan.id);
      // The body is the outbox's envelope, byte for byte what the signature covers.
      const event = await m.api(`/v1/events/${envelope.id}`);
      expect(event.status).toBe(200);
      expect(event.body).toEqual(envelope);
      const delivery = history.find((d) => d.eventId === envelope.id);
      expectShape(headers, {
        "content-type": "application/json",
        "x-svc-event": envelope.type,
        "x-svc-delivery": delivery.id,
        "webhook-id": envelope.id,
        "x-svc-attempt": "1",
        "x-svc-signature": expect.stringMatching(/^[0-9a-f]{64}$/),
        "webhook-signature": expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
      });
    }
    for (const d of history) {
      expect(d).toMatchObject({ status: "SUCCEEDED", attemptCount: 1, endpointId: endpoint.id, url: receiver.url, nextAttemptAt: null, redeliveryOf: null });
      expect(d.attempts).toEqual([
        {
          attempt: 1,
          startedAt: expect.any(String),
          finishedAt: expect.any(String),
          durationMs: expect.any(Number),
          responseStatus: 200,
          error: null,
          succeeded: true,
        },
      ]);
    }

    // The receiver's check is real: the same headers over a body changed by one character are refused.
    const [first] = hits;
    const forged = await fetch(receiver.url, {
      method: "POST",
      headers: first!.headers,
      body: first!.raw.replace(
        loan.id,
        loan.id.replace(/^./, (c) => (c === "a" ? "b" : "a")),
      ),
    });
    expect(forged.status).toBe(401);
  }, 30_000);

  test("A Queue message delivered twice causes no extra attempt", async () => {
    const m = await newMerchant();
    const receiver = startReceiver();
    const endpoint = await register(m, receiver, ["*"]);
    await createLoan(m);
    const history = await settledDeliveries(m, `endpointId=${endpoint.id}`, 3);
    const funded = history.find((d) => d.eventType === "loan.funded");
    expect(funded).toMatchObject({ status: "SUCCEEDED", attemptCount: 1 });

    // The very message the relay sent, twice more, plus a stale one for attempt 2, through the real queue.
    const queue = await stack.queue<DeliveryMessage>("WEBHOOK_DELIVERIES");
    await queue.send({ kind: "delivery", deliveryId: funded.id, attempt: 1 });
    await queue.sendBatch([
      { body: { kind: "delivery", deliveryId: funded.id, attempt: 1 } },
      { body: { kind: "delivery", deliveryId: funded.id, attempt: 2 } },
    ]);

    // Two markers behind them. Miniflare hands the consumer one batch at a time, in order: once the
    // first marker loan's deliveries have settled, the batch holding the duplicates has been handed
    // over; the second marker, created after that, lands in a later batch, so once it has settled,
    // the duplicates have been consumed to the end.
    await createLoan(m);
    await settledDeliveries(m, `endpointId=${endpoint.id}`, 6);
    await createLoan(m);
    await settledDeliveries(m, `endpointId=${endpoint.id}`, 9);

    expect(receiver.hits.filter((h) => h.headers["x-svc-delivery"] === funded.id)).toHaveLength(1);
    expect(receiver.hits).toHaveLength(9);
    const db = await stack.db();
    const attempts = await db.prepare("SELECT attempt FROM webhook_attempts WHERE delivery_id = ?").bind(funded.id).all<{ attempt: number }>();
    expect(attempts.results).toEqual([{ attempt: 1 }]);
    const [again] = (await deliveriesOf(m, `endpointId=${endpoint.id}&eventType=loan.funded`)).filter((d) => d.id === funded.id);
    expect(again).toMatchObject({ status: "SUCCEEDED", attemptCount: 1 });
    expect(again.attempts).toHaveLength(1);
  }, 30_000);

  // The outage tests and the redelivery run at once (each waits out retry delays), each with its own tenant.

  /**
   * The outage scenario for one kind of dead endpoint: it is subscribed to
   * `loan.funded` and to `webhook.delivery_failed`, a healthy endpoint of the
   * same tenant only to `webhook.delivery_failed`.
   */
  async function outage(dead: { url: string; secret?: string; count: () => number }, expectAttempt: (a: any) => void) {
    const m = await newMerchant();
    const watcher = startReceiver();
    const deadEndpoint = await register(m, dead, ["loan.funded", "webhook.delivery_failed"]);
    const watcherEndpoint = await register(m, watcher, ["webhook.delivery_failed"]);
    await createLoan(m);

    const [failed] = await settledDeliveries(m, `endpointId=${deadEndpoint.id}`, 1);
    expect(failed).toMatchObject({ eventType: "loan.funded", status: "FAILED", attemptCount: 3, nextAttemptAt: null });
    expect(failed.attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3]);
    for (const a of failed.attempts) {
      expectShape(a, { succeeded: false, finishedAt: expect.any(String), durationMs: expect.any(Number) });
      expectAttempt(a);
    }
    expect(dead.count()).toBe(3);

    // One webhook.delivery_failed, to the healthy endpoint only, and one notification, e-mailed.
    const [notice] = await until("the webhook.delivery_failed notification, e-mailed", async () => {
      const res = await m.api("/v1/notifications?limit=100");
      const found = (res.body.data as any[]).filter((x) => x.type === "webhook.delivery_failed");
      return found.length > 0 && found.every((x) => x.email.status === "SENT") && found;
    });
    const [toWatcher] = await settledDeliveries(m, `endpointId=${watcherEndpoint.id}`, 1);
    expect(toWatcher).toMatchObject({ eventType: "webhook.delivery_failed", status: "SUCCEEDED", attemptCount: 1, eventId: notice.eventId });
    expect(watcher.hits).toHaveLength(1);
    expect(watcher.hits[0]!.answered).toBe(200);
    expect(watcher.hits[0]!.envelope).toMatchObject({
      id: notice.eventId,
      type: "webhook.delivery_failed",
      tenantId: m.tenantId,
      data: { delivery: { id: failed.id, endpointId: deadEndpoint.id, eventId: failed.eventId, eventType: "loan.funded", attempts: 3 } },
    });

    // The cron safety net (relay, stalled-delivery requeue) adds nothing: still 3 attempts, one failure event, one notification, one e-mail.
    await stack.scheduled();
    const events = await m.api("/v1/events?type=webhook.delivery_failed&limit=100");
    expect(events.body.data.map((e: any) => e.id)).toEqual([notice.eventId]);
    const notices = (await m.api("/v1/notifications?limit=100")).body.data.filter((x: any) => x.type === "webhook.delivery_failed");
    expect(notices).toHaveLength(1);
    expect(notices[0].email).toMatchObject({ status: "SENT", to: m.email });
    const mails = await m.dashboard("/v1/dev/mailbox?limit=100");
    expect(mails.status).toBe(200);
    expect((mails.body.data as any[]).filter((x) => x.notificationId === notice.id)).toEqual([
      expect.objectContaining({ to: m.email, subject: expect.any(String) }),
    ]);
    // The dead endpoint was never told about its own failure.
    expect(await deliveriesOf(m, `endpointId=${deadEndpoint.id}`)).toHaveLength(1);
    expect(dead.count()).toBe(3);
    return { m, failed, deadEndpoint };
  }

  test.concurrent("Webhook outage, 500: exactly 3 attempts, then one webhook.delivery_failed (notification, e-mail, the other endpoint)", async () => {
    const dead = startReceiver(() => 500);
    const { failed } = await outage(
      {
        url: dead.url,
        set secret(s: string) {
          dead.secret = s;
        },
        count: () => dead.hits.length,
      },
      (a) => expect(a).toMatchObject({ responseStatus: 500, error: "HTTP 500" }),
    );
    expect(dead.hits.map((h) => h.answered)).toEqual([500, 500, 500]);
    expect(dead.hits.map((h) => h.headers["x-svc-attempt"])).toEqual(["1", "2", "3"]);
    expect(new Set(dead.hits.map((h) => h.headers["webhook-id"]))).toEqual(new Set([failed.eventId]));
    expect(new Set(dead.hits.map((h) => h.headers["x-svc-delivery"]))).toEqual(new Set([failed.id]));
    expect(dead.hits.every((h) => h.envelope.type === "loan.funded")).toBe(true);
  }, 30_000);

  test.concurrent("Webhook outage, no answer: each attempt times out, 3 in all, then one webhook.delivery_failed", async () => {
    const dead = startReceiver(() => "hang");
    await outage(
      {
        url: dead.url,
        set secret(s: string) {
          dead.secret = s;
        },
        count: () => dead.hits.length,
      },
      (a) => {
        expect(a).toMatchObject({ responseStatus: null, error: `no answer within ${TIMEOUT_MS} ms` });
        expect(a.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      },
    );
    expect(dead.hits.map((h) => h.answered)).toEqual([null, null, null]); // signatures fine; simply never answered
  }, 30_000);

  test.concurrent("Webhook outage, connection reset: 3 attempts, each a network error, then one webhook.delivery_failed", async () => {
    const dead = await startResettingReceiver();
    await outage({ url: dead.url, count: () => dead.requests }, (a) =>
      expectShape(a, { responseStatus: null, error: expect.stringMatching(/^network error: /) }),
    );
    expect(dead.connections).toBe(3);
  }, 30_000);

  test.concurrent("A redelivery by hand, once the endpoint is back, sends the same event id again and succeeds", async () => {
    const m = await newMerchant();
    const receiver = startReceiver(() => 500);
    const endpoint = await register(m, receiver, ["loan.funded"]);
    await createLoan(m);
    const [failed] = await settledDeliveries(m, `endpointId=${endpoint.id}`, 1);
    expect(failed).toMatchObject({ status: "FAILED", attemptCount: 3 });
    expect(receiver.hits).toHaveLength(3);

    receiver.answer = () => 200;
    const res = await m.api(`/v1/webhooks/deliveries/${failed.id}/redeliver`, { method: "POST" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      eventId: failed.eventId,
      eventType: "loan.funded",
      endpointId: endpoint.id,
      redeliveryOf: failed.id,
      status: "PENDING",
      attemptCount: 0,
      attempts: [],
    });
    expect(res.body.id).not.toBe(failed.id);

    const settled = await settledDeliveries(m, `endpointId=${endpoint.id}`, 2);
    const again = settled.find((d) => d.id === res.body.id);
    expect(again).toMatchObject({ status: "SUCCEEDED", attemptCount: 1, redeliveryOf: failed.id });
    expect(receiver.hits).toHaveLength(4);
    const [original, , , redelivered] = receiver.hits;
    expect(redelivered!.answered).toBe(200);
    expect(redelivered!.headers).toMatchObject({ "webhook-id": failed.eventId, "x-svc-delivery": res.body.id, "x-svc-attempt": "1" });
    // The same event: same id, same envelope, so the receiver deduplicates on it.
    expect(redelivered!.envelope).toEqual(original!.envelope);
    expect(redelivered!.raw).toBe(original!.raw);
    // The original stays FAILED, with its 3 attempts.
    expect(settled.find((d) => d.id === failed.id)).toMatchObject({ status: "FAILED", attemptCount: 3 });
  }, 30_000);

  test("Load: 150 loans, an endpoint failing 30% at random, a loan.funded-only endpoint and another tenant: every delivery settles, none lost, none misrouted", async () => {
    const LOANS = 150;
    const OTHER_LOANS = 50;
    const PARALLEL = 4;
    const started = Date.now();
    const main = await newMerchant();
    const other = await newMerchant();
    const flaky = startReceiver(() => (Math.random() < 0.3 ? 500 : 200));
    const fundedOnly = startReceiver();
    const otherReceiver = startReceiver();
    const flakyEndpoint = await register(main, flaky, ["*"]);
    const fundedEndpoint = await register(main, fundedOnly, ["loan.funded"]);
    const otherEndpoint = await register(other, otherReceiver, ["*"]);
    const subscriptions = new Map<string, { tenantId: string; events: string[] }>([
      [flakyEndpoint.id, { tenantId: main.tenantId, events: ["*"] }],
      [fundedEndpoint.id, { tenantId: main.tenantId, events: ["loan.funded"] }],
      [otherEndpoint.id, { tenantId: other.tenantId, events: ["*"] }],
    ]);

    const jobs = [...Array.from({ length: LOANS }, () => main), ...Array.from({ length: OTHER_LOANS }, () => other)];
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let m = jobs.shift(); m; m = jobs.shift()) await createLoan(m, "10.00");
      }),
    );
    const loansDone = Date.now();

    const db = await stack.db();
    const tenants = [main.tenantId, other.tenantId];
    const count = async (sql: string) =>
      (await db
        .prepare(sql)
        .bind(...tenants)
        .first<{ n: number }>())!.n;
    const unrelayed = () => count("SELECT COUNT(*) AS n FROM events WHERE tenant_id IN (?, ?) AND relayed_at IS NULL");
    const pending = () => count("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE tenant_id IN (?, ?) AND status = 'PENDING'");
    await until("every event relayed and every delivery settled", async () => (await unrelayed()) === 0 && (await pending()) === 0, {
      timeoutMs: 90_000,
      intervalMs: 500,
      tick: true,
      state: async () => `${await unrelayed()} events not relayed, ${await pending()} deliveries PENDING`,
    });
    const settled = Date.now();

    const events = (
      await db
        .prepare("SELECT id, tenant_id AS tenantId, type, envelope FROM events WHERE tenant_id IN (?, ?)")
        .bind(...tenants)
        .all<{ id: string; tenantId: string; type: string; envelope: string }>()
    ).results;
    const deliveries = (
      await db
        .prepare(
          "SELECT id, tenant_id AS tenantId, event_id AS eventId, event_type AS eventType, endpoint_id AS endpointId, status, attempt_count AS attemptCount, redelivery_of AS redeliveryOf FROM webhook_deliveries WHERE tenant_id IN (?, ?)",
        )
        .bind(...tenants)
        .all<{
          id: string;
          tenantId: string;
          eventId: string;
          eventType: string;
          endpointId: string;
          status: string;
          attemptCount: number;
          redeliveryOf: string | null;
        }>()
    ).results;
    const attempts = (
      await db
        .prepare(
          "SELECT delivery_id AS deliveryId, attempt, response_status AS responseStatus, succeeded, finished_at AS finishedAt FROM webhook_attempts WHERE tenant_id IN (?, ?) ORDER BY delivery_id, attempt",
        )
        .bind(...tenants)
        .all<{ deliveryId: string; attempt: number; responseStatus: number | null; succeeded: number | null; finishedAt: number | null }>()
    ).results;

    // The events: 3 per loan, plus one webhook.delivery_failed per FAILED delivery.
    const ofType = (tenantId: string, type: string) => events.filter((e) => e.tenantId === tenantId && e.type === type).length;
    for (const type of ["loan.application_submitted", "loan.decision", "loan.funded"]) {
      expect(ofType(main.tenantId, type)).toBe(LOANS);
      expect(ofType(other.tenantId, type)).toBe(OTHER_LOANS);
    }
    // Each loan's application_submitted comes strictly before its decision in createdAt order.
    const unordered = await db
      .prepare(
        `SELECT COUNT(*) AS n FROM events s JOIN events d ON d.loan_id = s.loan_id AND d.type = 'loan.decision'
           WHERE s.type = 'loan.application_submitted' AND s.tenant_id IN (?, ?) AND s.created_at >= d.created_at`,
      )
      .bind(...tenants)
      .first<{ n: number }>();
    expect(unordered!.n).toBe(0);
    const failedDeliveries = deliveries.filter((d) => d.status === "FAILED");
    expect(ofType(main.tenantId, "webhook.delivery_failed")).toBe(failedDeliveries.length);

    // Deliveries = events × subscribed endpoints, exactly: none lost, none to an unsubscribed type or another tenant.
    const expected = events.flatMap((e) => {
      const about = e.type === "webhook.delivery_failed" ? JSON.parse(e.envelope).data.delivery.endpointId : undefined;
      return [...subscriptions]
        .filter(([id, s]) => s.tenantId === e.tenantId && id !== about && (s.events.includes("*") || s.events.includes(e.type)))
        .map(([id]) => `${e.id} → ${id}`);
    });
    expect(deliveries.every((d) => d.redeliveryOf === null)).toBe(true);
    expect(deliveries.map((d) => `${d.eventId} → ${d.endpointId}`).sort()).toEqual(expected.sort());
    expect(deliveries.filter((d) => d.endpointId === fundedEndpoint.id)).toHaveLength(LOANS);
    expect(deliveries.filter((d) => d.endpointId === otherEndpoint.id)).toHaveLength(3 * OTHER_LOANS);

    // Every delivery settled with consistent attempts: SUCCEEDED after 1 to 3 (the last one succeeding), FAILED after exactly 3.
    const attemptsOf = groupBy(attempts, (a) => a.deliveryId);
    for (const d of deliveries) {
      const rows = attemptsOf.get(d.id) ?? [];
      expect(rows.map((a) => a.attempt)).toEqual(Array.from({ length: d.attemptCount }, (_, i) => i + 1));
      expect(rows.every((a) => a.finishedAt !== null)).toBe(true);
      const outcomes = rows.map((a) => Boolean(a.succeeded));
      if (d.status === "SUCCEEDED") {
        expect(d.attemptCount).toBeGreaterThanOrEqual(1);
        expect(d.attemptCount).toBeLessThanOrEqual(3);
        expect(outcomes).toEqual([...Array(d.attemptCount - 1).fill(false), true]);
      } else {
        expect(d.status).toBe("FAILED");
        expect(outcomes).toEqual([false, false, false]);
      }
    }
    expect(failedDeliveries.every((d) => d.endpointId === flakyEndpoint.id)).toBe(true);

    // The receivers agree with the history, request for request.
    const flakyDeliveries = deliveries.filter((d) => d.endpointId === flakyEndpoint.id);
    expect(flaky.hits).toHaveLength(flakyDeliveries.reduce((sum, d) => sum + d.attemptCount, 0));
    const hitsOf = groupBy(flaky.hits, (h) => h.headers["x-svc-delivery"]!);
    for (const d of flakyDeliveries) {
      const hits = (hitsOf.get(d.id) ?? []).sort((a, b) => Number(a.headers["x-svc-attempt"]) - Number(b.headers["x-svc-attempt"]));
      expect(hits.map((h) => h.answered)).toEqual((attemptsOf.get(d.id) ?? []).map((a) => a.responseStatus));
      expect(new Set(hits.map((h) => h.headers["webhook-id"]))).toEqual(new Set([d.eventId]));
    }
    for (const [receiver, tenantId, total] of [
      [flaky, main.tenantId, flaky.hits.length],
      [fundedOnly, main.tenantId, LOANS],
      [otherReceiver, other.tenantId, 3 * OTHER_LOANS],
    ] as const) {
      expect(receiver.hits).toHaveLength(total);
      expect(receiver.hits.filter((h) => h.envelope.tenantId !== tenantId)).toEqual([]);
      expect(receiver.hits.filter((h) => h.answered === 401)).toEqual([]);
      expect(receiver.hits.every((h) => h.headers["x-svc-event"] === h.envelope.type)).toBe(true);
    }
    expect(fundedOnly.hits.filter((h) => h.envelope.type !== "loan.funded")).toEqual([]);
    expect(new Set(fundedOnly.hits.map((h) => h.envelope.id)).size).toBe(LOANS);
    expect(flaky.hits.filter((h) => h.envelope.type === "webhook.delivery_failed")).toEqual([]);

    const failures = flaky.hits.filter((h) => h.answered === 500).length;
    console.log(
      `load: ${LOANS + OTHER_LOANS} loans in ${((loansDone - started) / 1000).toFixed(1)} s, settled ${((settled - loansDone) / 1000).toFixed(1)} s later; ` +
        `${deliveries.length} deliveries (${failedDeliveries.length} FAILED), ${flaky.hits.length} requests to the flaky endpoint (${((100 * failures) / flaky.hits.length).toFixed(1)}% answered 500)`,
    );
    expect(failures / flaky.hits.length).toBeGreaterThan(0.2);
    expect(failures / flaky.hits.length).toBeLessThan(0.4);
  }, 150_000);
});
