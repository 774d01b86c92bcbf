import { describe, expect, test } from "bun:test";
import { createTestApp } from "../../../shared/testing/harness.ts";
import { bearer, createKey, PASSWORD, signUpTenant, uniqueEmail } from "../../../shared/testing/fixtures.ts";

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
