import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { apiKeys } from "../../../../db/schema/api-keys.ts";
import { users } from "../../../../db/schema/users.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { removeUser } from "../../../../shared/users/manage-users.ts";
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

describe("passwords are not only whitespace, invisible or blank characters", () => {
  const BLANK = [
    "            ",
    " \t\n".repeat(5),
    "\u00a0".repeat(12),
    "\u3000".repeat(16),
    // Found by an audit: characters /\S/ lets through that show nothing.
    ...["\u200b", "\u200c", "\u2060", "\u180e", "\u3164", "\u2800", "\u00ad", "\u0085", "\u0000", "\u0301"].map((ch) => ch.repeat(12)),
  ];
  const refused = (res: { status: number; body: any }, field: string) => {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      message: [`${field}: must contain a visible character (not only whitespace, invisible or blank characters)`],
      error: "Bad Request",
    });
  };

  test("signup refuses a password of only whitespace: 400 naming password, no account", async () => {
    for (const password of BLANK) {
      const email = uniqueEmail();
      refused(await t.request("POST", "/v1/auth/signup", { body: { email, password, companyName: "Blank Pay" } }), "password");
      expect(await t.db.select().from(users).where(eq(users.email, email))).toEqual([]);
    }
    // Spaces among other characters are fine, and 12 characters are still enough.
    const spaced = await t.request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password: "  a         ", companyName: "Spaced Pay" } });
    expect(spaced.status).toBe(201);
    // Any script's letters, digits, punctuation or symbols are visible.
    for (const password of ["密码密码密码密码密码密码", "٣٣٣٣٣٣٣٣٣٣٣٣", "🔑".repeat(12), "e\u0301".repeat(6), "\u200bcorrect horse battery"])
      expect((await t.request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password, companyName: "Script Pay" } })).status).toBe(201);
  });

  test('invisible characters do not count towards the 12 (an audit signed up with eleven U+200B and an "a"): 400 saying so, no account', async () => {
    for (const password of ["\u200b".repeat(11) + "a", "\u2060\u200d".repeat(8) + "abc", "\u0000".repeat(11) + "password!", "\u3164".repeat(6) + "secret"]) {
      const email = uniqueEmail();
      const res = await t.request("POST", "/v1/auth/signup", { body: { email, password, companyName: "Invisible Pay" } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: ["password: must be at least 12 characters, not counting invisible ones (control, formatting or blank characters)"],
        error: "Bad Request",
      });
      expect(await t.db.select().from(users).where(eq(users.email, email))).toEqual([]);
    }
  });

  test("adding a user and changing a password refuse it too; the short-password rule is unchanged", async () => {
    const owner = await signUpTenant(t);
    for (const password of BLANK) {
      const email = uniqueEmail("blank");
      refused(await t.request("POST", "/v1/users", { body: { email, password, role: "MEMBER" }, headers: bearer(owner.token) }), "password");
      expect(await t.db.select().from(users).where(eq(users.email, email))).toEqual([]);
    }
    refused(
      await t.request("POST", "/v1/auth/password", { body: { currentPassword: PASSWORD, newPassword: " ".repeat(20) }, headers: bearer(owner.token) }),
      "newPassword",
    );
    expect((await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).status).toBe(200);
    const short = await t.request("POST", "/v1/users", { body: { email: uniqueEmail(), password: "   ", role: "MEMBER" }, headers: bearer(owner.token) });
    expect(short.status).toBe(400);
    expect(short.body.message).toContain("password: must be at least 12 characters");
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

  test("revokeKeys=true revokes the live keys the user created with the removal: 401 on the very next request; another user's key is untouched", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const first = await createKey(t, admin.token, "admin 1");
    const second = await createKey(t, admin.token, "admin 2");
    const earlier = await createKey(t, admin.token, "admin, revoked before");
    const byOwner = await createKey(t, owner.token, "owner's");
    const revokedBefore = await t.request("DELETE", `/v1/api-keys/${earlier.id}`, { headers: bearer(owner.token) });
    t.clock.advance(60);
    for (const { key } of [first, second, byOwner]) expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);

    expect((await t.request("DELETE", `/v1/users/${admin.id}?revokeKeys=true`, { headers: bearer(owner.token) })).status).toBe(204);
    for (const { key } of [first, second]) {
      const next = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
      expect(next.status).toBe(401);
      expect(next.body).toEqual({ statusCode: 401, message: "Invalid or revoked API key", error: "Unauthorized" });
    }
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": byOwner.key } })).status).toBe(200);
    const listed = await t.request("GET", "/v1/api-keys", { headers: bearer(owner.token) });
    const byName = Object.fromEntries(listed.body.data.map((k: { name: string }) => [k.name, k]));
    expect(byName["admin 1"]).toMatchObject({ revokedAt: t.clock.now().toISOString(), createdBy: null });
    expect(byName["admin 2"]).toMatchObject({ revokedAt: t.clock.now().toISOString(), createdBy: null });
    // A key revoked before keeps the time it was revoked.
    expect(byName["admin, revoked before"]).toMatchObject({ revokedAt: revokedBefore.body.revokedAt, createdBy: null });
    expect(byName["owner's"]).toMatchObject({ revokedAt: null, createdBy: { userId: owner.userId, email: owner.email } });
  });

  test("revokeKeys is under the removal's guard: a refused removal (403, 409) revokes nothing; a bad value is a 400 naming it", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const ownerKey = await createKey(t, owner.token);
    const adminKey = await createKey(t, admin.token);
    expect((await t.request("DELETE", `/v1/users/${owner.userId}?revokeKeys=true`, { headers: bearer(admin.token) })).status).toBe(403);
    expect((await t.request("DELETE", `/v1/users/${owner.userId}?revokeKeys=true`, { headers: bearer(owner.token) })).status).toBe(409);
    const bad = await t.request("DELETE", `/v1/users/${admin.id}?revokeKeys=yes`, { headers: bearer(owner.token) });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
    expect(bad.body.message[0]).toStartWith("revokeKeys:");
    // revokeKeys=false is the default: the keys stay.
    expect((await t.request("DELETE", `/v1/users/${admin.id}?revokeKeys=false`, { headers: bearer(owner.token) })).status).toBe(204);
    for (const { key } of [ownerKey, adminKey]) expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
    const rows = await t.db.select().from(apiKeys).where(eq(apiKeys.tenantId, owner.tenantId));
    expect(rows.map((r) => r.revokedAt)).toEqual([null, null]);
  });

  test("revokeKeys when the removal loses a race (the user was made OWNER between the ADMIN's read and write): 403, the user and its keys stay", async () => {
    const owner = await signUpTenant(t);
    const admin = await addUserWithRole(t, owner.token, "ADMIN");
    const target = await addUserWithRole(t, owner.token, "ADMIN");
    const { key } = await createKey(t, target.token);
    // A database whose batch first lets a competing promotion commit, as a second request would.
    const racingDb = new Proxy(t.db, {
      get(db, prop, receiver) {
        if (prop !== "batch") return Reflect.get(db, prop, receiver);
        return async (statements: unknown) => {
          await t.db.update(users).set({ role: "OWNER" }).where(eq(users.id, target.id));
          return (db.batch as (s: unknown) => unknown)(statements);
        };
      },
    });
    const actor = { tenantId: owner.tenantId, userId: admin.id, role: "ADMIN" as const };
    await expect(removeUser({ db: racingDb }, { actor, id: target.id, revokeKeys: true, now: t.clock.now() })).rejects.toThrow("Only an OWNER");
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).status).toBe(200);
    const [row] = await t.db.select().from(apiKeys).where(eq(apiKeys.createdByUserId, target.id));
    expect(row!.revokedAt).toBeNull();
  });

  test("revokeKeys on another tenant's user: 404, and its keys keep working", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const bAdmin = await addUserWithRole(t, b.token, "ADMIN");
    const bKey = await createKey(t, bAdmin.token);
    expect((await t.request("DELETE", `/v1/users/${bAdmin.id}?revokeKeys=true`, { headers: bearer(a.token) })).status).toBe(404);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": bKey.key } })).status).toBe(200);
    const bList = await t.request("GET", "/v1/api-keys", { headers: bearer(b.token) });
    expect(bList.body.data.map((k: { id: string; revokedAt: string | null; createdBy: unknown }) => [k.id, k.revokedAt, k.createdBy])).toEqual([
      [bKey.id, null, { userId: bAdmin.id, email: bAdmin.email }],
    ]);
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

describe("adding users is limited per tenant and per client IP", () => {
  test("5 a minute per tenant, answered or not (each 409 tells whether an address has an account): 429 with Retry-After; another tenant is not affected", async () => {
    const app = await createTestApp({ signupLimit: 3 });
    try {
      const owner = await signUpTenant(app);
      const other = await signUpTenant(app);
      let client = 0;
      const add = (token: string, email = uniqueEmail("probe"), ip = `198.51.100.${++client}`) =>
        app.request("POST", "/v1/users", { body: { email, password: PASSWORD, role: "MEMBER" }, headers: { ...bearer(token), "cf-connecting-ip": ip } });
      expect((await add(owner.token)).status).toBe(201);
      expect((await add(owner.token, other.email)).status).toBe(409);
      expect((await add(owner.token)).status).toBe(201);
      const limited = await add(owner.token);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("60");
      expect(limited.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      expect((await add(other.token)).status).toBe(201);
    } finally {
      app.close();
    }
  });

  test("one client holding several tenants probes no faster than one tenant: its IP's budget is spent whichever tenant adds (an audit got 20 answers a minute from 4 tenants)", async () => {
    const app = await createTestApp({ signupLimit: 3 });
    try {
      const tenants = [await signUpTenant(app), await signUpTenant(app), await signUpTenant(app)] as const;
      const add = (token: string, ip: string, email = uniqueEmail("probe")) =>
        app.request("POST", "/v1/users", { body: { email, password: PASSWORD, role: "MEMBER" }, headers: { ...bearer(token), "cf-connecting-ip": ip } });
      const attacker = "203.0.113.7";
      expect((await add(tenants[0].token, attacker)).status).toBe(201);
      expect((await add(tenants[1].token, attacker, tenants[0].email)).status).toBe(409);
      expect((await add(tenants[2].token, attacker)).status).toBe(201);
      // Each tenant has budget left; the IP has none.
      for (const tenant of tenants) {
        const limited = await add(tenant.token, attacker, tenants[0].email);
        expect(limited.status).toBe(429);
        expect(limited.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      }
      // Another client of the same tenant is not held up by that IP.
      expect((await add(tenants[1].token, "203.0.113.8")).status).toBe(201);
    } finally {
      app.close();
    }
  });
});
