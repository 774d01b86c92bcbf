import { describe, expect, test } from "bun:test";
import { countRoundTrips } from "../../../shared/testing/count-round-trips.ts";
import { createTestApp } from "../../../shared/testing/harness.ts";
import { addUserWithRole, bearer, createKey, PASSWORD, signUpTenant, uniqueEmail, verificationTokenFor } from "../../../shared/testing/fixtures.ts";

describe("rate limits answer 429 with Retry-After", () => {
  test("per client IP on unauthenticated routes", async () => {
    const t = await createTestApp({ ipLimit: 3 });
    const login = (ip: string) =>
      t.request("POST", "/v1/auth/login", { body: { email: uniqueEmail(), password: PASSWORD }, headers: { "cf-connecting-ip": ip } });
    for (let i = 0; i < 3; i++) expect((await login("203.0.113.7")).status).toBe(401);
    const limited = await login("203.0.113.7");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
    // Another address is not affected; health is never limited.
    expect((await login("203.0.113.8")).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await t.request("GET", "/v1/health", { headers: { "cf-connecting-ip": "203.0.113.7" } })).status).toBe(200);
    t.close();
  });

  test("per API key, independently of other keys", async () => {
    const t = await createTestApp({ keyLimit: 4 });
    const owner = await signUpTenant(t);
    const a = await createKey(t, owner.token, "a");
    const b = await createKey(t, owner.token, "b");
    for (let i = 0; i < 4; i++) expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": a.key } })).status).toBe(200);
    const limited = await t.request("GET", "/v1/me", { headers: { "x-api-key": a.key } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": b.key } })).status).toBe(200);
    t.close();
  });

  test("a bad key is refused before it can spend anyone's quota", async () => {
    const t = await createTestApp({ keyLimit: 2 });
    const owner = await signUpTenant(t); // the owner's session quota: one for createKey, one for /v1/me
    const { key } = await createKey(t, owner.token);
    for (let i = 0; i < 3; i++) expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": "svc_test_nope-nope-nope" } })).status).toBe(401);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
    expect((await t.request("GET", "/v1/me", { headers: bearer(owner.token) })).status).toBe(200);
    t.close();
  });
});

describe("limits that more keys or more guesses do not get around", () => {
  test("per tenant: two keys (and the dashboard) share one tenant budget; another tenant is unaffected", async () => {
    const t = await createTestApp({ keyLimit: 100, tenantLimit: 6 });
    try {
      const owner = await signUpTenant(t); // signup, verify: no tenant budget spent (unauthenticated)
      const a = await createKey(t, owner.token, "a"); // 1
      const b = await createKey(t, owner.token, "b"); // 2
      const me = (headers: Record<string, string>) => t.request("GET", "/v1/me", { headers });
      expect((await me({ "x-api-key": a.key })).status).toBe(200); // 3
      expect((await me({ "x-api-key": a.key })).status).toBe(200); // 4
      expect((await me({ "x-api-key": b.key })).status).toBe(200); // 5
      expect((await me({ "x-api-key": b.key })).status).toBe(200); // 6
      const limited = await me({ "x-api-key": b.key });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("60");
      expect(limited.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      expect((await me({ "x-api-key": a.key })).status).toBe(429);
      expect((await me(bearer(owner.token))).status).toBe(429);
      const other = await signUpTenant(t);
      expect((await me(bearer(other.token))).status).toBe(200);
    } finally {
      t.close();
    }
  });

  test("failed authentications spend the client IP's budget: then 429, and no lookup for that IP until the window ends", async () => {
    const t = await createTestApp({ authFailureLimit: 3 });
    try {
      const owner = await signUpTenant(t);
      const { key } = await createKey(t, owner.token);
      const from = (ip: string, headers: Record<string, string>) => t.request("GET", "/v1/me", { headers: { "cf-connecting-ip": ip, ...headers } });
      const attacker = "203.0.113.66";
      expect((await from(attacker, { "x-api-key": "svc_test_guess000000000000000000000001" })).status).toBe(401);
      expect((await from(attacker, { "x-api-key": "svc_test_guess000000000000000000000002" })).status).toBe(401);
      expect((await from(attacker, bearer("not.a.jwt"))).status).toBe(401); // bad sessions count too
      const exhausted = await from(attacker, { "x-api-key": "svc_test_guess000000000000000000000003" });
      expect(exhausted.status).toBe(429);
      expect(exhausted.headers.get("retry-after")).toBe("60");
      expect(exhausted.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      // The IP is refused before its credentials are looked up, so a list of stolen keys cannot be tried through it.
      // Counted where statements reach the database (the lookup's SQL is built once and reused: db/prepared-batch.ts).
      const refused = await countRoundTrips(t.client, () => from(attacker, { "x-api-key": key }));
      expect(refused.result.status).toBe(429);
      expect(Number(refused.result.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.trips).toBe(0);
      const allowed = await countRoundTrips(t.client, () => from("203.0.113.67", { "x-api-key": key }));
      expect(allowed.result.status).toBe(200);
      expect(allowed.trips).toBeGreaterThan(0); // the counter does see lookups
      // Without credentials nothing is looked up or spent: the usual 401.
      expect((await from(attacker, {})).status).toBe(401);
      // Other addresses are not affected.
      expect((await from("203.0.113.67", { "x-api-key": "svc_test_guess000000000000000000000004" })).status).toBe(401);
    } finally {
      t.close();
    }
  });
});

describe("GET /v1/me: authentication is one D1 round trip, the description is kept per isolate against its version", () => {
  test("one round trip once the description is known, for a key and a session; a revoked key is refused on the very next request", async () => {
    const t = await createTestApp();
    const owner = await signUpTenant(t);
    const { id, key } = await createKey(t, owner.token);
    // Signing up and creating the key changed the description: the first read reads it again (a second round trip).
    const cold = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", { headers: { "x-api-key": key } }));
    expect(cold.result.status).toBe(200);
    expect(cold.trips).toBe(2);
    const byKey = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", { headers: { "x-api-key": key } }));
    expect(byKey.result.status).toBe(200);
    expect(byKey.result.body).toEqual(cold.result.body);
    expect(byKey.result.body.principal).toEqual({ kind: "apiKey", apiKeyId: id, mode: "sandbox" });
    expect(byKey.result.body.merchantConfigs).toHaveLength(1);
    expect(byKey.result.body.widgetPrograms).toHaveLength(1);
    expect(byKey.trips).toBe(1);
    const bySession = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", { headers: bearer(owner.token) }));
    expect(bySession.result.status).toBe(200);
    expect(bySession.result.body.principal.kind).toBe("user");
    expect(bySession.result.body.merchantConfigs).toEqual(byKey.result.body.merchantConfigs);
    expect(bySession.trips).toBe(1);

    expect((await t.request("DELETE", `/v1/api-keys/${id}`, { headers: bearer(owner.token) })).status).toBeLessThan(300);
    const revoked = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", { headers: { "x-api-key": key } }));
    expect(revoked.result.status).toBe(401);
    expect(revoked.result.body.merchantConfigs).toBeUndefined();
    t.close();
  });

  test("a change to what it describes shows on the very next request: a new widget program, a deleted one, a verified e-mail", async () => {
    const t = await createTestApp();
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const { key } = await createKey(t, owner.token);
    const me = async (headers: Record<string, string>) => {
      const res = await t.request("GET", "/v1/me", { headers });
      expect(res.status).toBe(200);
      return res.body;
    };
    const before = await me({ "x-api-key": key });
    expect(before.emailVerified).toBe(false);
    expect(before.widgetPrograms).toHaveLength(1);

    const created = await t.request("POST", "/v1/widget-programs", {
      headers: bearer(owner.token),
      body: { name: "Checkout", merchantConfigId: before.merchantConfigs[0].id, allowedOrigins: [] },
    });
    expect(created.status).toBe(201);
    const withProgram = await me({ "x-api-key": key });
    expect(withProgram.widgetPrograms.map((p: { id: string }) => p.id)).toContain(created.body.id);
    expect(withProgram.widgetPrograms).toHaveLength(2);

    expect((await t.request("DELETE", `/v1/widget-programs/${created.body.id}`, { headers: bearer(owner.token) })).status).toBeLessThan(300);
    expect((await me({ "x-api-key": key })).widgetPrograms.map((p: { id: string }) => p.id)).not.toContain(created.body.id);

    const token = await verificationTokenFor(t, owner.email);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token } })).status).toBe(200);
    expect((await me({ "x-api-key": key })).emailVerified).toBe(true);
    expect((await me(bearer(owner.token))).emailVerified).toBe(true);
    t.close();
  });

  test("one copy serves every caller of the tenant, each with its own emailVerified: a MEMBER's own, a key the owner's", async () => {
    const t = await createTestApp();
    const owner = await signUpTenant(t); // verified
    const { key } = await createKey(t, owner.token);
    const member = await addUserWithRole(t, owner.token, "MEMBER"); // never verified
    const byMember = await t.request("GET", "/v1/me", { headers: bearer(member.token) });
    expect(byMember.status).toBe(200);
    expect(byMember.body.principal).toEqual({ kind: "user", userId: member.id, email: member.email, role: "MEMBER" });
    expect(byMember.body.emailVerified).toBe(false);
    const byKey = await countRoundTrips(t.client, () => t.request("GET", "/v1/me", { headers: { "x-api-key": key } }));
    expect(byKey.trips).toBe(1); // the member's read left the copy at this version
    expect(byKey.result.body.emailVerified).toBe(true);
    const byOwner = await t.request("GET", "/v1/me", { headers: bearer(owner.token) });
    expect(byOwner.body.emailVerified).toBe(true);
    expect(byOwner.body.merchantConfigs).toEqual(byMember.body.merchantConfigs);
    t.close();
  });

  test("each tenant sees its own description, however the isolate's copies interleave", async () => {
    const t = await createTestApp();
    const a = await signUpTenant(t, "Tenant A");
    const b = await signUpTenant(t, "Tenant B");
    const keyA = (await createKey(t, a.token)).key;
    const keyB = (await createKey(t, b.token)).key;
    for (let round = 0; round < 2; round++) {
      const [ra, rb] = await Promise.all([
        t.request("GET", "/v1/me", { headers: { "x-api-key": keyA } }),
        t.request("GET", "/v1/me", { headers: { "x-api-key": keyB } }),
      ]);
      expect(ra.body.tenant.id).toBe(a.tenantId);
      expect(rb.body.tenant.id).toBe(b.tenantId);
      const configsOf = async (token: string) =>
        (await t.request("GET", "/v1/merchant-configs", { headers: bearer(token) })).body.data.map((m: { id: string }) => m.id);
      expect(ra.body.merchantConfigs.map((m: { id: string }) => m.id)).toEqual(await configsOf(a.token));
      expect(rb.body.merchantConfigs.map((m: { id: string }) => m.id)).toEqual(await configsOf(b.token));
      expect(ra.body.widgetPrograms[0].embedKey).not.toBe(rb.body.widgetPrograms[0].embedKey);
    }
    t.close();
  });
});
