import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { apiKeys } from "../../../../db/schema/api-keys.ts";
import { createApiKey, listApiKeys } from "../../../../shared/api-keys/api-key-verbs.ts";
import { countRoundTrips } from "../../../../shared/testing/count-round-trips.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { addUserWithRole, bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("API keys", () => {
  test("created once with its secret, stored as a SHA-256 hash, listed without secrets", async () => {
    const owner = await signUpTenant(t);
    const res = await t.request("POST", "/v1/api-keys", { body: { name: "backend" }, headers: bearer(owner.token) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: "backend",
      key: expect.stringMatching(/^svc_test_/),
      prefix: res.body.key.slice(0, 13),
      mode: "sandbox",
      createdAt: expect.any(String),
    });
    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.id, res.body.id));
    expect(row!.keyHash).toBe(new Bun.CryptoHasher("sha256").update(res.body.key).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(res.body.key);

    const list = await t.request("GET", "/v1/api-keys", { headers: bearer(owner.token) });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      {
        id: res.body.id,
        name: "backend",
        prefix: res.body.prefix,
        mode: "sandbox",
        createdAt: res.body.createdAt,
        revokedAt: null,
        createdBy: { userId: owner.userId, email: owner.email },
      },
    ]);
    expect(list.body.nextCursor).toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(res.body.key);
  });

  test("each key names who created it (an added ADMIN's e-mail), read in one query; null once that user is removed, and the key still works; another tenant's keys never appear", async () => {
    const owner = await signUpTenant(t);
    const other = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const byAdmin = await createKey(t, admin.token, "by admin");
    t.clock.advance(1);
    const byOwner = await createKey(t, owner.token, "by owner");
    const otherKey = await createKey(t, other.token, "other tenant");
    const list = async (token: string) => {
      const res = await t.request("GET", "/v1/api-keys", { headers: bearer(token) });
      expect(res.status).toBe(200);
      return res.body.data as { id: string; name: string; createdBy: { userId: string; email: string } | null }[];
    };

    const before = await list(owner.token);
    expect(before.map((k) => [k.name, k.createdBy])).toEqual([
      ["by owner", { userId: owner.userId, email: owner.email }],
      ["by admin", { userId: admin.id, email: admin.email }],
    ]);
    // Any role reads it, and it is the same list.
    expect(await list(admin.token)).toEqual(before);
    const otherList = await list(other.token);
    expect(otherList.map((k) => k.id)).toEqual([otherKey.id]);
    expect(JSON.stringify(otherList)).not.toContain(admin.email);
    expect(JSON.stringify(before)).not.toContain(other.email);
    // The creator comes with the keys, in the same statement: no extra round trip.
    const { result, trips } = await countRoundTrips(t.client, () => listApiKeys({ db: t.db }, { tenantId: owner.tenantId, limit: 20 }));
    expect(trips).toBe(1);
    expect(result.data.map((k) => k.createdBy?.email)).toEqual([owner.email, admin.email]);

    expect((await t.request("DELETE", `/v1/users/${admin.id}`, { headers: bearer(owner.token) })).status).toBe(204);
    const after = await list(owner.token);
    expect(after.map((k) => [k.id, k.createdBy])).toEqual([
      [byOwner.id, { userId: owner.userId, email: owner.email }],
      [byAdmin.id, null],
    ]);
    expect(after[1]).toMatchObject({ name: "by admin", revokedAt: null });
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": byAdmin.key } })).status).toBe(200);
    // Revoking answers the key as the list shows it.
    const revoked = await t.request("DELETE", `/v1/api-keys/${byOwner.id}`, { headers: bearer(owner.token) });
    expect(revoked.body.createdBy).toEqual({ userId: owner.userId, email: owner.email });
  });

  test("a key whose creator is another tenant's user (a row no route writes) names nobody", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const { id } = await createKey(t, a.token);
    await t.db.update(apiKeys).set({ createdByUserId: b.userId }).where(eq(apiKeys.id, id));
    const list = await t.request("GET", "/v1/api-keys", { headers: bearer(a.token) });
    expect(list.body.data.map((k: { id: string; createdBy: unknown }) => [k.id, k.createdBy])).toEqual([[id, null]]);
    expect(JSON.stringify(list.body)).not.toContain(b.email);
  });

  test("the key authenticates as its tenant", async () => {
    const owner = await signUpTenant(t);
    const { id, key } = await createKey(t, owner.token);
    const me = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
    expect(me.status).toBe(200);
    expect(me.body.tenant.id).toBe(owner.tenantId);
    expect(me.body.principal).toEqual({ kind: "apiKey", apiKeyId: id, mode: "sandbox" });
  });

  test("revocation takes effect on the very next request", async () => {
    const owner = await signUpTenant(t);
    const { id, key } = await createKey(t, owner.token);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
    const revoked = await t.request("DELETE", `/v1/api-keys/${id}`, { headers: bearer(owner.token) });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const next = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ statusCode: 401, message: "Invalid or revoked API key", error: "Unauthorized" });
    const again = await t.request("DELETE", `/v1/api-keys/${id}`, { headers: bearer(owner.token) });
    expect(again.status).toBe(200);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  test("no key and a wrong key: 401 with the error body", async () => {
    const none = await t.request("GET", "/v1/me");
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ statusCode: 401, message: "Missing credentials: send x-api-key or Authorization: Bearer <token>", error: "Unauthorized" });
    const wrong = await t.request("GET", "/v1/me", { headers: { "x-api-key": "svc_test_" + "x".repeat(32) } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("Unauthorized");
    const garbageBearer = await t.request("GET", "/v1/me", { headers: { authorization: "Bearer abc.def.ghi" } });
    expect(garbageBearer.status).toBe(401);
  });

  test("another tenant's key id: 404, and the key stays valid", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const { id, key } = await createKey(t, a.token);
    const res = await t.request("DELETE", `/v1/api-keys/${id}`, { headers: bearer(b.token) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "API key not found", error: "Not Found" });
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
    const bList = await t.request("GET", "/v1/api-keys", { headers: bearer(b.token) });
    expect(bList.body.data).toEqual([]);
  });

  test("a MEMBER gets 403 on create and revoke, and reads the list (never a secret)", async () => {
    const owner = await signUpTenant(t);
    const { id } = await createKey(t, owner.token);
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    for (const [method, path, body] of [
      ["POST", "/v1/api-keys", { name: "x" }],
      ["DELETE", `/v1/api-keys/${id}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { body, headers: bearer(member.token) });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("Forbidden");
    }
    const list = await t.request("GET", "/v1/api-keys", { headers: bearer(member.token) });
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([id]);
    expect(list.body.data[0].key).toBeUndefined();
    expect(list.body.data[0].revokedAt).toBeNull();
  });

  test("keys can't manage keys: the routes are dashboard-only", async () => {
    const owner = await signUpTenant(t);
    const { key } = await createKey(t, owner.token);
    const res = await t.request("POST", "/v1/api-keys", { body: { name: "x" }, headers: { "x-api-key": key } });
    expect(res.status).toBe(401);
  });

  test("pagination: newest first with an opaque cursor", async () => {
    const owner = await signUpTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createKey(t, owner.token, `k${i}`)).id);
      t.clock.advance(1);
    }
    const first = await t.request("GET", "/v1/api-keys?limit=2", { headers: bearer(owner.token) });
    expect(first.body.data.map((k: { name: string }) => k.name)).toEqual(["k4", "k3"]);
    const second = await t.request("GET", `/v1/api-keys?limit=2&cursor=${first.body.nextCursor}`, { headers: bearer(owner.token) });
    expect(second.body.data.map((k: { name: string }) => k.name)).toEqual(["k2", "k1"]);
    const third = await t.request("GET", `/v1/api-keys?limit=2&cursor=${second.body.nextCursor}`, { headers: bearer(owner.token) });
    expect(third.body.data.map((k: { name: string }) => k.name)).toEqual(["k0"]);
    expect(third.body.nextCursor).toBeNull();
    const bad = await t.request("GET", "/v1/api-keys?limit=101", { headers: bearer(owner.token) });
    expect(bad.status).toBe(400);
    expect(bad.body.message[0]).toStartWith("limit:");
  });
});

describe("the cap on a tenant's keys", () => {
  const CAP_MESSAGE = "This tenant already has 20 active API keys, the most it may hold; revoke one (DELETE /v1/api-keys/:id) before creating another";
  const create = (token: string, name = "k") => t.request("POST", "/v1/api-keys", { body: { name }, headers: bearer(token) });

  test("at most 20 unrevoked keys: the 21st is a 409 and no key; revoking one makes room", async () => {
    const owner = await signUpTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await create(owner.token, `k${i}`);
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const over = await create(owner.token, "one too many");
    expect(over.status).toBe(409);
    expect(over.body).toEqual({ statusCode: 409, message: CAP_MESSAGE, error: "Conflict" });
    expect(await t.db.select().from(apiKeys).where(eq(apiKeys.tenantId, owner.tenantId))).toHaveLength(20);
    // Another tenant has its own 20.
    expect((await create((await signUpTenant(t)).token)).status).toBe(201);
    expect((await t.request("DELETE", `/v1/api-keys/${ids[0]}`, { headers: bearer(owner.token) })).status).toBe(200);
    expect((await create(owner.token, "replacement")).status).toBe(201);
    expect((await create(owner.token, "again too many")).status).toBe(409);
  });

  test("concurrent creations cannot pass the cap together", async () => {
    const owner = await signUpTenant(t);
    for (let i = 0; i < 15; i++) expect((await create(owner.token)).status).toBe(201);
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => create(owner.token)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    const active = await t.db.select().from(apiKeys).where(eq(apiKeys.tenantId, owner.tenantId));
    expect(active.filter((k) => k.revokedAt === null)).toHaveLength(20);
  });
});

describe("a key made by a user removed meanwhile", () => {
  test("is refused (401), not a failed reference (an audit raced key creation against the user's removal: 500s)", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    // The creation as the route makes it, after the admin's session was checked and the admin then removed.
    expect((await t.request("DELETE", `/v1/users/${admin.id}`, { headers: bearer(owner.token) })).status).toBe(204);
    const late = createApiKey({ db: t.db }, { tenantId: owner.tenantId, mode: "sandbox", name: "late", createdByUserId: admin.id, now: t.clock.now() });
    await expect(late).rejects.toMatchObject({ status: 401, message: "Invalid or expired session token" });
    expect(await t.db.select().from(apiKeys).where(eq(apiKeys.name, "late"))).toEqual([]);
    // Another tenant's user as the creator: refused the same way.
    const other = await signUpTenant(t);
    const crossed = createApiKey(
      { db: t.db },
      { tenantId: owner.tenantId, mode: "sandbox", name: "crossed", createdByUserId: other.userId, now: t.clock.now() },
    );
    await expect(crossed).rejects.toMatchObject({ status: 401 });
  });
});
