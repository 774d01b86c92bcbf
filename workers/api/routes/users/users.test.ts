import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { addUserWithRole, bearer, createKey, PASSWORD, signUpTenant, uniqueEmail } from "../../../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("POST /v1/users", () => {
  test("an OWNER adds an ADMIN who can log in with that role in the same tenant", async () => {
    const owner = await signUpTenant(t);
    const email = uniqueEmail("admin");
    const res = await t.request("POST", "/v1/users", { body: { email, password: PASSWORD, role: "ADMIN" }, headers: bearer(owner.token) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), email, role: "ADMIN" });
    const login = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
    const me = await t.request("GET", "/v1/me", { headers: bearer(login.body.accessToken) });
    expect(me.body.tenant.id).toBe(owner.tenantId);
    expect(me.body.principal.role).toBe("ADMIN");
  });

  test("an ADMIN adds a MEMBER but not an OWNER (403)", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const member = await t.request("POST", "/v1/users", { body: { email: uniqueEmail(), password: PASSWORD, role: "MEMBER" }, headers: bearer(admin.token) });
    expect(member.status).toBe(201);
    const ownerByAdmin = await t.request("POST", "/v1/users", {
      body: { email: uniqueEmail(), password: PASSWORD, role: "OWNER" },
      headers: bearer(admin.token),
    });
    expect(ownerByAdmin.status).toBe(403);
    expect(ownerByAdmin.body).toEqual({ statusCode: 403, message: "Only an OWNER may add an OWNER", error: "Forbidden" });
    const ownerByOwner = await t.request("POST", "/v1/users", {
      body: { email: uniqueEmail(), password: PASSWORD, role: "OWNER" },
      headers: bearer(owner.token),
    });
    expect(ownerByOwner.status).toBe(201);
  });

  test("a MEMBER gets 403", async () => {
    const owner = await signUpTenant(t);
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    const res = await t.request("POST", "/v1/users", { body: { email: uniqueEmail(), password: PASSWORD, role: "MEMBER" }, headers: bearer(member.token) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ statusCode: 403, message: "This route requires the role OWNER or ADMIN; you are MEMBER", error: "Forbidden" });
  });

  test("dashboard only: an API key or no credentials get 401", async () => {
    const owner = await signUpTenant(t);
    const { key } = await createKey(t, owner.token);
    const body = { email: uniqueEmail(), password: PASSWORD, role: "MEMBER" };
    const withKey = await t.request("POST", "/v1/users", { body, headers: { "x-api-key": key } });
    expect(withKey.status).toBe(401);
    expect(withKey.body.message).toContain("dashboard session");
    expect((await t.request("POST", "/v1/users", { body })).status).toBe(401);
  });

  test("duplicate e-mail 409; unknown role and short password 400 naming the fields", async () => {
    const owner = await signUpTenant(t);
    const dup = await t.request("POST", "/v1/users", { body: { email: owner.email, password: PASSWORD, role: "ADMIN" }, headers: bearer(owner.token) });
    expect(dup.status).toBe(409);
    const bad = await t.request("POST", "/v1/users", { body: { email: uniqueEmail(), password: "short", role: "ROOT" }, headers: bearer(owner.token) });
    expect(bad.status).toBe(400);
    expect((bad.body.message as string[]).map((m) => m.split(":")[0]).sort()).toEqual(["password", "role"]);
  });
});

describe("GET /v1/users", () => {
  test("any role reads its own tenant's users with their roles and never a password; cursor pages; another tenant's users never appear", async () => {
    const owner = await signUpTenant(t);
    const other = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    const res = await t.request("GET", "/v1/users", { headers: bearer(member.token) });
    expect(res.status).toBe(200);
    // Newest first by (createdAt, id): the test clock may give all three the same instant, so compare as a set.
    const listed = (body: { data: { email: string; role: string }[] }) => body.data.map((u) => `${u.email} ${u.role}`).sort();
    expect(listed(res.body)).toEqual([`${admin.email} ADMIN`, `${member.email} MEMBER`, `${owner.email} OWNER`].sort());
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["createdAt", "email", "id", "role"]);
    expect(res.body.nextCursor).toBeNull();
    expect(JSON.stringify(res.body)).not.toContain(other.email);

    const first = await t.request("GET", "/v1/users?limit=2", { headers: bearer(owner.token) });
    expect(first.body.data).toHaveLength(2);
    const second = await t.request("GET", `/v1/users?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, { headers: bearer(owner.token) });
    expect(second.body.nextCursor).toBeNull();
    expect([...listed(first.body), ...listed(second.body)].sort()).toEqual(listed(res.body));
  });

  test("dashboard only (an API key gets 401); a bad limit or cursor is a 400 naming it", async () => {
    const owner = await signUpTenant(t);
    const { key } = await createKey(t, owner.token);
    expect((await t.request("GET", "/v1/users", { headers: { "x-api-key": key } })).status).toBe(401);
    const bad = await t.request("GET", "/v1/users?limit=0&cursor=nope", { headers: bearer(owner.token) });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(expect.arrayContaining([expect.stringMatching(/^limit:/), expect.stringMatching(/^cursor:/)]));
  });
});
