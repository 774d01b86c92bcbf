import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../../../../db/schema/webhooks.ts";
import { DEV_SECRETS_KEY, openSecret } from "../../../../shared/crypto/secret-box.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { MAX_WEBHOOK_ENDPOINTS, subscribedEndpoints } from "../../../../shared/webhooks/endpoints.ts";
import { certifiedLiveTenant } from "../../../../shared/testing/live-tenants.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const HOOK = "https://hooks.merchant.example/svc";
const register = (headers: Record<string, string>, body: unknown) => t.request("POST", "/v1/webhooks", { body, headers });
const list = (headers: Record<string, string>, query = "") => t.request("GET", `/v1/webhooks${query}`, { headers });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m === field || m.startsWith(`${field}: `) || m.startsWith(`${field}.`))).toBe(true);
  expect(res.body.message).toHaveLength(fields.length);
};

describe("webhooks: happy path", () => {
  test("an API key registers an endpoint: the secret is returned once and stored only sealed", async () => {
    const m = await sandboxTenant(t);
    const res = await register(apiKey(m.key), { url: HOOK, events: ["loan.funded", "loan.repaid"] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: HOOK,
      events: ["loan.funded", "loan.repaid"],
      mode: "sandbox",
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      secretPrefix: res.body.secret.slice(0, 12),
      createdAt: t.clock.now().toISOString(),
      pausedUntil: null,
    });
    const { secret } = res.body;

    const [row] = await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, res.body.id));
    expect(row).toMatchObject({ tenantId: m.tenantId, url: HOOK, events: ["loan.funded", "loan.repaid"], secretPrefix: secret.slice(0, 12), deletedAt: null });
    expect(row!.secretCiphertext).not.toBe(secret);
    expect(row!.secretCiphertext).not.toContain(secret.slice(6));
    expect(row!.secretCiphertext).toStartWith("v1.");
    expect(await openSecret(row!.secretCiphertext, DEV_SECRETS_KEY)).toBe(secret);
    await expect(openSecret(row!.secretCiphertext, "another-key-another-key-another-key")).rejects.toThrow();
    // Not in any column, nor in any log line.
    expect(JSON.stringify({ ...row, secretPrefix: null })).not.toContain(secret.slice(6, 20));
    expect(t.logs.join("\n")).not.toContain(secret.slice(6));
  });

  test("the list shows the endpoints newest first, without their secrets", async () => {
    const m = await sandboxTenant(t);
    const a = (await register(apiKey(m.key), { url: HOOK, events: ["*"] })).body;
    t.clock.advance(1);
    const b = (await register(bearer(m.token), { url: "https://other.merchant.example/hooks?x=1", events: ["loan.decision"] })).body;
    const res = await list(apiKey(m.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: b.id,
          url: "https://other.merchant.example/hooks?x=1",
          events: ["loan.decision"],
          mode: "sandbox",
          secretPrefix: b.secretPrefix,
          createdAt: b.createdAt,
          pausedUntil: null,
        },
        { id: a.id, url: HOOK, events: ["*"], mode: "sandbox", secretPrefix: a.secretPrefix, createdAt: a.createdAt, pausedUntil: null },
      ],
      nextCursor: null,
    });
    for (const s of [a.secret, b.secret]) {
      expect(JSON.stringify(res.body)).not.toContain(s);
      expect(JSON.stringify((await list(bearer(m.token))).body)).not.toContain(s);
      expect(t.logs.join("\n")).not.toContain(s.slice(6));
    }
    expect(a.secret).not.toBe(b.secret);
  });

  test("an endpoint paused for timing out shows until when (pausedUntil), and null once the pause is over", async () => {
    const m = await sandboxTenant(t);
    const a = (await register(apiKey(m.key), { url: HOOK, events: ["*"] })).body;
    const until = t.clock.now().getTime() + 30_000;
    await t.db.update(webhookEndpoints).set({ timeoutsInARow: 3, pausedUntil: until }).where(eq(webhookEndpoints.id, a.id));
    expect((await list(apiKey(m.key))).body.data).toEqual([expect.objectContaining({ id: a.id, pausedUntil: new Date(until).toISOString() })]);
    // The pause over (the time is past): null.
    await t.db.update(webhookEndpoints).set({ pausedUntil: t.clock.now().getTime() }).where(eq(webhookEndpoints.id, a.id));
    expect((await list(bearer(m.token))).body.data).toEqual([expect.objectContaining({ id: a.id, pausedUntil: null })]);
  });

  test('`["*"]` and every event type are accepted; the URL is stored as the URL standard normalizes it', async () => {
    const m = await sandboxTenant(t);
    const all = await register(apiKey(m.key), { url: "https://Hooks.Merchant.EXAMPLE", events: ["*"] });
    expect(all.status).toBe(201);
    expect(all.body.url).toBe("https://hooks.merchant.example/");
    const every = await register(apiKey(m.key), {
      url: "https://hooks.merchant.example:8443/a/b",
      events: [
        "loan.application_submitted",
        "loan.decision",
        "loan.approved",
        "loan.rejected",
        "loan.funded",
        "loan.funding_failed",
        "loan.repaid",
        "loan.repayment_failed",
        "loan.overdue",
        "loan.defaulted",
        "liquidity.low",
        "liquidity.unavailable",
        "webhook.delivery_failed",
      ],
    });
    expect(every.status).toBe(201);
    expect(every.body.events).toHaveLength(13);
  });

  test("local runs accept http://127.0.0.1:<port> and http://localhost:<port>", async () => {
    const m = await sandboxTenant(t);
    for (const url of ["http://127.0.0.1:4000/hook", "http://localhost:4000/hook", "https://localhost:4443/"]) {
      const res = await register(apiKey(m.key), { url, events: ["*"] });
      expect(res.status).toBe(201);
      expect(res.body.url).toBe(url);
    }
  });

  test("DELETE removes the endpoint: 204, gone from the list, no new deliveries; the others still get theirs", async () => {
    const m = await sandboxTenant(t);
    const kept = (await register(apiKey(m.key), { url: HOOK, events: ["*"] })).body;
    const gone = (await register(apiKey(m.key), { url: "https://gone.merchant.example/", events: ["*"] })).body;
    const res = await t.request("DELETE", `/v1/webhooks/${gone.id}`, { headers: apiKey(m.key) });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await list(apiKey(m.key))).body.data.map((e: { id: string }) => e.id)).toEqual([kept.id]);
    const [row] = await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, gone.id));
    expect(row!.deletedAt).toEqual(t.clock.now());
    expect((await subscribedEndpoints(t.db, m.tenantId, "loan.funded")).map((e) => e.id)).toEqual([kept.id]);

    await createdLoan(t, m.key); // 3 events, relayed after the request
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, gone.id))).toEqual([]);
    expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, kept.id))).toHaveLength(3);

    const again = await t.request("DELETE", `/v1/webhooks/${gone.id}`, { headers: apiKey(m.key) });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ statusCode: 404, message: "Webhook endpoint not found", error: "Not Found" });
  });

  test("pagination: limit and an opaque cursor", async () => {
    const m = await sandboxTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await register(apiKey(m.key), { url: `https://h${i}.merchant.example/`, events: ["*"] })).body.id);
      t.clock.advance(1);
    }
    const first = await list(apiKey(m.key), "?limit=2");
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    const second = await list(apiKey(m.key), `?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const third = await list(apiKey(m.key), `?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
  });
});

describe("webhooks: errors", () => {
  let key: string;
  let tenantId: string;
  beforeAll(async () => {
    ({ key, tenantId } = await sandboxTenant(t));
  });
  const stored = async () => (await t.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.tenantId, tenantId))).length;

  describe("in production, URLs that could reach private networks (SSRF)", () => {
    beforeAll(() => {
      t.deps.environment = "production";
    });
    afterAll(() => {
      t.deps.environment = "development";
    });
    afterEach(async () => {
      expect(await stored()).toBe(0);
    });

    const PRIVATE = "url: must not point to a private, loopback, link-local or reserved address";
    test.each([
      ["http to a public host", "http://hooks.merchant.example/", "url: must use https"],
      ["http to 127.0.0.1 (local runs only)", "http://127.0.0.1:4000/hook", "url: must use https"],
      ["http to localhost (local runs only)", "http://localhost:4000/hook", "url: must use https"],
      ["https to localhost", "https://localhost:4443/", "url: must be a public host, not a local name"],
      ["a *.localhost name", "https://api.localhost/", "url: must be a public host, not a local name"],
      ["a *.local name", "https://printer.local/", "url: must be a public host, not a local name"],
      ["a *.internal name", "https://metadata.google.internal/computeMetadata/v1/", "url: must be a public host, not a local name"],
      ["a single-label host", "https://intranet/hook", "url: must be a public host with a domain name (a single-label host is local)"],
      ["loopback", "https://127.0.0.1/", PRIVATE],
      ["loopback in decimal", "https://2130706433/", PRIVATE],
      ["loopback in hex", "https://0x7f000001/", PRIVATE],
      ["loopback in octal", "https://0177.0.0.1/", PRIVATE],
      ["loopback, short form", "https://127.1/", PRIVATE],
      ["0.0.0.0", "https://0.0.0.0/", PRIVATE],
      ["10/8", "https://10.1.2.3/", PRIVATE],
      ["172.16/12", "https://172.20.0.1/", PRIVATE],
      ["192.168/16", "https://192.168.1.1:8443/", PRIVATE],
      ["CGNAT", "https://100.64.0.1/", PRIVATE],
      ["the cloud metadata address", "https://169.254.169.254/latest/meta-data/", PRIVATE],
      ["multicast", "https://224.0.0.1/", PRIVATE],
      ["broadcast", "https://255.255.255.255/", PRIVATE],
      ["IPv6 loopback", "https://[::1]/", PRIVATE],
      ["IPv6 unspecified", "https://[::]/", PRIVATE],
      ["IPv6 unique local", "https://[fd00::1]/", PRIVATE],
      ["IPv6 link-local", "https://[fe80::1]/", PRIVATE],
      ["IPv6 multicast", "https://[ff02::1]/", PRIVATE],
      ["IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/", PRIVATE],
      ["IPv4-mapped loopback in hex", "https://[::ffff:7f00:1]/", PRIVATE],
      ["IPv4-mapped metadata address", "https://[::ffff:a9fe:a9fe]/", PRIVATE],
      ["NAT64 of a private address", "https://[64:ff9b::10.0.0.1]/", PRIVATE],
      ["credentials", "https://user:pass@hooks.merchant.example/", "url: must not contain credentials"],
      ["a file URL", "file:///etc/passwd", "url: must use https"],
      ["too long", `https://hooks.merchant.example/${"a".repeat(2048)}`, "url: must be at most 2048 characters"],
    ])("%s: 400 naming url", async (_name, url, message) => {
      const res = await register(apiKey(key), { url, events: ["*"] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message: [message], error: "Bad Request" });
    });

    test("a public https URL is accepted in production", async () => {
      const res = await register(apiKey(key), { url: HOOK, events: ["*"] });
      expect(res.status).toBe(201);
      await t.request("DELETE", `/v1/webhooks/${res.body.id}`, { headers: apiKey(key) });
      await t.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, res.body.id));
    });
  });

  test.each([
    ["an unknown event type", { url: HOOK, events: ["loan.created"] }, ["events.0"]],
    ["an unknown event type after a good one", { url: HOOK, events: ["loan.funded", "loan.Funded"] }, ["events.1"]],
    ["empty events", { url: HOOK, events: [] }, ["events"]],
    ['"*" with another type', { url: HOOK, events: ["*", "loan.funded"] }, ["events"]],
    ["a type twice", { url: HOOK, events: ["loan.funded", "loan.funded"] }, ["events"]],
    ["events not a list", { url: HOOK, events: "*" }, ["events"]],
    ["events missing", { url: HOOK }, ["events"]],
    ["url missing", { events: ["*"] }, ["url"]],
    ["url not a string", { url: 42, events: ["*"] }, ["url"]],
    ["url not absolute", { url: "hooks.merchant.example/svc", events: ["*"] }, ["url"]],
    ["both wrong", { url: "ftp://x.example/", events: [] }, ["url", "events"]],
  ])("%s: 400 naming the field", async (_name, body, fields) => {
    const res = await register(apiKey(key), body);
    expectFieldErrors(res, ...fields);
    expect(await stored()).toBe(0);
  });

  test('the message for "*" with another type says what to send', async () => {
    const res = await register(apiKey(key), { url: HOOK, events: ["*", "loan.funded"] });
    expect(res.body.message).toEqual(['events: must be exactly ["*"] to subscribe to every event type, or a list of event types without "*"']);
  });

  test("malformed JSON and a body that is no object: 400", async () => {
    const bad = await t.request("POST", "/v1/webhooks", { rawBody: "{", headers: { ...apiKey(key), "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.body.statusCode).toBe(400);
    const array = await register(apiKey(key), [HOOK]);
    expect(array.status).toBe(400);
  });

  test("DELETE of an unknown id or a non-UUID: 404", async () => {
    for (const id of [crypto.randomUUID(), "not-an-id"]) {
      const res = await t.request("DELETE", `/v1/webhooks/${id}`, { headers: apiKey(key) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Webhook endpoint not found", error: "Not Found" });
    }
  });

  test("list: a bad limit or cursor is a 400 naming it", async () => {
    expectFieldErrors(await list(apiKey(key), "?limit=0"), "limit");
    expectFieldErrors(await list(apiKey(key), "?cursor=nope"), "cursor");
  });
});

describe("webhooks: security", () => {
  test("no credentials: 401 on every route", async () => {
    for (const [method, path, body] of [
      ["POST", "/v1/webhooks", { url: HOOK, events: ["*"] }],
      ["GET", "/v1/webhooks", undefined],
      ["DELETE", `/v1/webhooks/${crypto.randomUUID()}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { body });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("Unauthorized");
    }
    expect((await register(apiKey("svc_test_" + "x".repeat(32)), { url: HOOK, events: ["*"] })).status).toBe(401);
  });

  test("a MEMBER may list but not register or delete (403); an ADMIN may", async () => {
    const m = await sandboxTenant(t);
    const { id } = (await register(apiKey(m.key), { url: HOOK, events: ["*"] })).body;
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const post = await register(bearer(member.token), { url: HOOK, events: ["*"] });
    expect(post.status).toBe(403);
    expect(post.body).toEqual({ statusCode: 403, message: "This route requires the role OWNER or ADMIN; you are MEMBER", error: "Forbidden" });
    expect((await t.request("DELETE", `/v1/webhooks/${id}`, { headers: bearer(member.token) })).status).toBe(403);
    const listed = await list(bearer(member.token));
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([id]);

    const admin = await addUserWithRole(t, m.token, "ADMIN");
    const created = await register(bearer(admin.token), { url: HOOK, events: ["loan.funded"] });
    expect(created.status).toBe(201);
    expect((await t.request("DELETE", `/v1/webhooks/${created.body.id}`, { headers: bearer(admin.token) })).status).toBe(204);
    expect((await t.request("DELETE", `/v1/webhooks/${id}`, { headers: bearer(m.token) })).status).toBe(204);
  });

  test("tenants never see or delete each other's endpoints", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const theirs = (await register(apiKey(a.key), { url: HOOK, events: ["*"] })).body;
    expect((await list(apiKey(b.key))).body).toEqual({ data: [], nextCursor: null });
    const del = await t.request("DELETE", `/v1/webhooks/${theirs.id}`, { headers: apiKey(b.key) });
    expect(del.status).toBe(404);
    expect((await list(apiKey(a.key))).body.data.map((e: { id: string }) => e.id)).toEqual([theirs.id]);
    expect(await subscribedEndpoints(t.db, b.tenantId, "loan.funded")).toEqual([]);
    // A cursor from a's list shows b nothing of a's.
    await register(apiKey(a.key), { url: HOOK, events: ["*"] });
    const aPage = await list(apiKey(a.key), "?limit=1");
    expect((await list(apiKey(b.key), `?cursor=${aPage.body.nextCursor}`)).body.data).toEqual([]);
  });

  test(`at most ${MAX_WEBHOOK_ENDPOINTS} endpoints per mode, racing registrations included: one more is 409 with the spec's body; a deleted one frees its place; the other mode has its own (one tenant's 500 endpoints that never answered delayed everyone's webhooks by minutes)`, async () => {
    const m = await certifiedLiveTenant(t, "Many Hooks Ltd");
    const results = await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS + 5 }, (_, i) => register(apiKey(m.key), { url: `https://h${i}.merchant.example/`, events: ["*"] })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.body).toEqual({
        statusCode: 409,
        message: `This tenant already has ${MAX_WEBHOOK_ENDPOINTS} sandbox webhook endpoints, the most it may hold; delete one (DELETE /v1/webhooks/:id) before registering another`,
        error: "Conflict",
      });
    }
    expect((await list(apiKey(m.key), "?limit=100")).body.data).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    // The live mode has its own places.
    expect((await register(apiKey(m.liveKey), { url: HOOK, events: ["*"] })).status).toBe(201);
    const first = results.find((r) => r.status === 201)!.body.id as string;
    expect((await t.request("DELETE", `/v1/webhooks/${first}`, { headers: apiKey(m.key) })).status).toBe(204);
    expect((await register(apiKey(m.key), { url: HOOK, events: ["*"] })).status).toBe(201);
    expect((await register(apiKey(m.key), { url: HOOK, events: ["*"] })).status).toBe(409);
  });

  test("a live endpoint before go-live certification: 403, as for live keys and live widget programs; after it, 201", async () => {
    const m = await sandboxTenant(t);
    const early = await register(bearer(m.token), { url: HOOK, events: ["*"], mode: "live" });
    expect(early.status).toBe(403);
    expect(early.body).toMatchObject({ statusCode: 403, error: "Forbidden", message: expect.stringContaining("after go-live certification") });
    expect((await list(bearer(m.token), "?mode=live")).body.data).toEqual([]);
    await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, m.tenantId));
    expect((await register(bearer(m.token), { url: HOOK, events: ["*"], mode: "live" })).status).toBe(201);
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error") || line.includes("relay after write failed"))).toEqual([]);
  });
});
