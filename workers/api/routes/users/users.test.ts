import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { users } from "../../../../db/schema/users.ts";
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

describe("removing users and changing roles", () => {
  const me = (token: string) => t.request("GET", "/v1/me", { headers: bearer(token) });

  test("an ADMIN removes a MEMBER: its session is refused at once, its e-mail is free, the keys it made stay; 204", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    const otherAdmin = await addUserWithRole(t, owner.token, "ADMIN");
    const { key } = await createKey(t, otherAdmin.token);
    expect((await me(member.token)).status).toBe(200);

    const removed = await t.request("DELETE", `/v1/users/${member.id}`, { headers: bearer(admin.token) });
    expect(removed.status).toBe(204);
    const refused = await me(member.token);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ statusCode: 401, error: "Unauthorized" });
    expect((await t.request("POST", "/v1/auth/login", { body: { email: member.email, password: PASSWORD } })).status).toBe(401);
    const listed = (await t.request("GET", "/v1/users?limit=100", { headers: bearer(owner.token) })).body.data.map((u: { id: string }) => u.id);
    expect(listed).not.toContain(member.id);
    // The address can be used again; a second removal is not found.
    expect(
      (await t.request("POST", "/v1/users", { body: { email: member.email, password: PASSWORD, role: "MEMBER" }, headers: bearer(owner.token) })).status,
    ).toBe(201);
    expect((await t.request("DELETE", `/v1/users/${member.id}`, { headers: bearer(admin.token) })).status).toBe(404);
    // A user who created a key can be removed; the key is the tenant's and keeps working.
    expect((await t.request("DELETE", `/v1/users/${otherAdmin.id}`, { headers: bearer(owner.token) })).status).toBe(204);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
  });

  test("only an OWNER removes or makes an OWNER (403); the last OWNER is neither removed nor demoted (409); a MEMBER may do neither (403)", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    const forbidden = async (res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      expect(r.status).toBe(403);
      expect(r.body.error).toBe("Forbidden");
    };
    await forbidden(t.request("DELETE", `/v1/users/${owner.userId}`, { headers: bearer(admin.token) }));
    await forbidden(t.request("PATCH", `/v1/users/${owner.userId}`, { body: { role: "MEMBER" }, headers: bearer(admin.token) }));
    await forbidden(t.request("PATCH", `/v1/users/${member.id}`, { body: { role: "OWNER" }, headers: bearer(admin.token) }));
    await forbidden(t.request("DELETE", `/v1/users/${admin.id}`, { headers: bearer(member.token) }));
    await forbidden(t.request("PATCH", `/v1/users/${member.id}`, { body: { role: "ADMIN" }, headers: bearer(member.token) }));

    const last = await t.request("DELETE", `/v1/users/${owner.userId}`, { headers: bearer(owner.token) });
    expect(last.status).toBe(409);
    expect(last.body.message).toContain("last OWNER");
    const demote = await t.request("PATCH", `/v1/users/${owner.userId}`, { body: { role: "ADMIN" }, headers: bearer(owner.token) });
    expect(demote.status).toBe(409);
    expect((await me(owner.token)).body.principal.role).toBe("OWNER");

    // With a second OWNER, the first may step down, and then be removed by the second.
    const promoted = await t.request("PATCH", `/v1/users/${admin.id}`, { body: { role: "OWNER" }, headers: bearer(owner.token) });
    expect(promoted).toMatchObject({ status: 200, body: { id: admin.id, role: "OWNER" } });
    expect((await me(admin.token)).body.principal.role).toBe("OWNER");
    expect((await t.request("PATCH", `/v1/users/${owner.userId}`, { body: { role: "ADMIN" }, headers: bearer(owner.token) })).body.role).toBe("ADMIN");
    // The demotion applies on the very next request: the former OWNER may no longer add an OWNER.
    await forbidden(t.request("POST", "/v1/users", { body: { email: uniqueEmail(), password: PASSWORD, role: "OWNER" }, headers: bearer(owner.token) }));
    expect((await t.request("DELETE", `/v1/users/${owner.userId}`, { headers: bearer(admin.token) })).status).toBe(204);
  });

  test("two OWNERs removing each other at once: one removal wins, the tenant keeps an OWNER", async () => {
    const owner = await signUpTenant(t);
    const second = await addUserWithRole(t, owner.token, "OWNER");
    const results = await Promise.all([
      t.request("DELETE", `/v1/users/${second.id}`, { headers: bearer(owner.token) }),
      t.request("DELETE", `/v1/users/${owner.userId}`, { headers: bearer(second.token) }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    // One removal; the other is refused: 409 (the last OWNER), or 401 if its caller was the one removed first.
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409 || s === 401)).toHaveLength(1);
    const owners = await t.db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, owner.tenantId), eq(users.role, "OWNER")));
    expect(owners).toHaveLength(1);
  });

  test("another tenant's user, or an id that is no UUID: 404, and nothing changes", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const bMember = await addUserWithRole(t, b.token, "MEMBER");
    for (const id of [bMember.id, b.userId, "not-a-user"]) {
      expect((await t.request("DELETE", `/v1/users/${id}`, { headers: bearer(a.token) })).status).toBe(404);
      expect((await t.request("PATCH", `/v1/users/${id}`, { body: { role: "ADMIN" }, headers: bearer(a.token) })).status).toBe(404);
    }
    expect((await me(bMember.token)).body.principal.role).toBe("MEMBER");
  });
});
