import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { loanProducts } from "../../../../db/schema/loan-products.ts";
import { emailVerifications } from "../../../../db/schema/email-verifications.ts";
import { users } from "../../../../db/schema/users.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import type { Db } from "../../../../db/create-db.ts";
import { principalForSession } from "../../../../shared/auth/resolve-principal.ts";
import { changePassword } from "../../../../shared/auth/user-sessions.ts";
import { DomainError, toErrorBody } from "../../../../shared/domain/errors.ts";
import { EMAIL_TAKEN_MESSAGE } from "../../../../shared/users/add-user.ts";
import { mailbox } from "../../../../db/schema/webhooks.ts";
import { addUserWithRole, bearer, createKey, PASSWORD, signUpTenant, uniqueEmail, verificationTokenFor } from "../../../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("POST /v1/auth/signup", () => {
  test("creates a sandbox tenant that can lend at once", async () => {
    const email = uniqueEmail();
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, companyName: " Acme " } });
    expect(res.status).toBe(201);
    expect(res.body.tenant).toEqual({ id: expect.any(String), name: "Acme" });
    expect(res.body.user).toEqual({ id: expect.any(String), email, role: "OWNER" });
    expect(res.body.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);

    const me = await t.request("GET", "/v1/me", { headers: bearer(res.body.accessToken) });
    expect(me.status).toBe(200);
    expect(me.body.mode).toBe("sandbox");
    expect(me.body.merchantConfigs).toHaveLength(1);
    const config = me.body.merchantConfigs[0];
    expect(config).toMatchObject({
      network: "POLYGON",
      stablecoin: "USDC",
      chain: "POLYGON_AMOY",
      tenures: [3, 7, 15],
      minTicket: "10.00",
      maxTicket: "1000.00",
    });
    const [product] = await t.db.select().from(loanProducts).where(eq(loanProducts.id, config.loanProductId));
    expect(product).toMatchObject({ status: "ACTIVE", merchantConfigId: config.id, network: "POLYGON", stablecoin: "USDC", version: "v1" });
    expect(me.body.widgetPrograms).toHaveLength(1);
    expect(me.body.widgetPrograms[0]).toMatchObject({ merchantConfigId: config.id, loanProductId: config.loanProductId });
    expect(me.body.widgetPrograms[0].embedKey).toMatch(/^ek_test_/);
    const pools = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, res.body.tenant.id));
    expect(pools.map((p) => p.stablecoin).sort()).toEqual(["USDC", "USDT"]);
    for (const pool of pools) expect(pool).toMatchObject({ mode: "sandbox", available: 100_000_000_000n, reserved: 0n });
  });

  test("stores the password as a salted PBKDF2 hash, never the password", async () => {
    const { email } = await signUpTenant(t);
    const [row] = await t.db.select().from(users).where(eq(users.email, email));
    expect(row!.passwordHash).not.toContain(PASSWORD);
    expect(row!.passwordIterations).toBe(100_000);
    expect(atob(row!.passwordSalt)).toHaveLength(16);
  });

  test("an e-mail with an account is a 409, whatever its case", async () => {
    const { email } = await signUpTenant(t);
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, companyName: "Other" } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ statusCode: 409, message: EMAIL_TAKEN_MESSAGE, error: "Conflict" });
    expect(EMAIL_TAKEN_MESSAGE).toStartWith("An account with this e-mail already exists.");
  });

  test("validation names every bad field", async () => {
    const res = await t.request("POST", "/v1/auth/signup", { body: { email: "not-an-email", password: "short", companyName: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Bad Request");
    const fields = (res.body.message as string[]).map((m) => m.split(":")[0]);
    expect(fields.sort()).toEqual(["companyName", "email", "password"]);
    expect(res.body.message.find((m: string) => m.startsWith("password"))).toContain("at least 12 characters");
  });
});

describe("POST /v1/auth/login", () => {
  test("valid credentials give an expiring session for the user", async () => {
    const { email, userId } = await signUpTenant(t);
    const res = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual({ id: userId, email, role: "OWNER" });
    const me = await t.request("GET", "/v1/me", { headers: bearer(res.body.accessToken) });
    expect(me.body.principal).toEqual({ kind: "user", userId, email, role: "OWNER" });
  });

  test("a wrong password and an unknown e-mail get the same 401", async () => {
    const { email } = await signUpTenant(t);
    const wrong = await t.request("POST", "/v1/auth/login", { body: { email, password: "wrong password!!" } });
    const unknown = await t.request("POST", "/v1/auth/login", { body: { email: uniqueEmail("nobody"), password: PASSWORD } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ statusCode: 401, message: "Invalid e-mail or password", error: "Unauthorized" });
    expect(unknown.body).toEqual(wrong.body);
  });

  test("an expired session token is a 401 with the error body", async () => {
    const { email } = await signUpTenant(t);
    t.clock.set(new Date(Date.now() - 2 * 3600_000));
    const old = await t.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
    t.clock.set(new Date());
    expect(old.status).toBe(200);
    const res = await t.request("GET", "/v1/me", { headers: bearer(old.body.accessToken) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, message: "Invalid or expired session token", error: "Unauthorized" });
  });

  test("a token for a user that no longer exists is a 401", async () => {
    const { token, userId } = await signUpTenant(t);
    await t.db.delete(emailVerifications).where(eq(emailVerifications.userId, userId));
    await t.db.delete(users).where(eq(users.id, userId));
    const res = await t.request("GET", "/v1/me", { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.body.statusCode).toBe(401);
  });
});

describe("e-mail verification", () => {
  const mailTo = async (email: string) => await t.db.select().from(mailbox).where(eq(mailbox.toAddress, email.toLowerCase())).orderBy(sql`rowid`);
  const meOf = (headers: Record<string, string>) => t.request("GET", "/v1/me", { headers });
  const verify = (token: unknown) => t.request("POST", "/v1/auth/verify-email", { body: { token } });

  test("signup e-mails one single-use link, with none of the merchant's text; /v1/me shows emailVerified for the user and for a key", async () => {
    const email = uniqueEmail();
    const companyName = "Click <a href='https://evil.example'>here</a> to claim your prize";
    const res = await t.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName } });
    expect(res.status).toBe(201);
    const mails = await mailTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ subject: "[svc credit] Verify your e-mail address", notificationId: null });
    expect(mails[0]!.body).not.toContain("prize");
    expect(mails[0]!.body).not.toContain("evil.example");
    const token = /http:\/\/api\.svc-credit\.test\/v1\/auth\/verify-email\?token=([0-9A-Za-z]{43})\n/.exec(mails[0]!.body)?.[1];
    expect(token).toBeDefined();
    // Only the hash is kept.
    const [row] = await t.db.select().from(emailVerifications).where(eq(emailVerifications.userId, res.body.user.id));
    expect(row).toMatchObject({ email, usedAt: null });
    expect(JSON.stringify(row)).not.toContain(token!);
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(24 * 3600_000);

    // The sandbox works at once: a key, /v1/me, all unverified.
    const { key } = await createKey(t, res.body.accessToken);
    expect((await meOf(bearer(res.body.accessToken))).body.emailVerified).toBe(false);
    expect((await meOf({ "x-api-key": key })).body.emailVerified).toBe(false);

    const verified = await verify(token);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ userId: res.body.user.id, email, emailVerified: true, emailVerifiedAt: t.clock.now().toISOString() });
    expect((await meOf(bearer(res.body.accessToken))).body.emailVerified).toBe(true);
    expect((await meOf({ "x-api-key": key })).body.emailVerified).toBe(true);

    const again = await verify(token);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ statusCode: 400, message: expect.stringMatching(/^token has already been used/), error: "Bad Request" });
  });

  test("a wrong, malformed, missing or expired token is a 400 and verifies nothing", async () => {
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const token = (await verificationTokenFor(t, owner.email))!;
    const wrong = await verify("A".repeat(43));
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ statusCode: 400, message: "token is not a valid verification token", error: "Bad Request" });
    expect((await verify("x'; DROP TABLE users; --")).body.message).toBe("token is not a valid verification token");
    const missing = await t.request("POST", "/v1/auth/verify-email", { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toEqual([expect.stringMatching(/^token: /)]);

    t.clock.advance(24 * 3600_000 + 1);
    try {
      const expired = await verify(token);
      expect(expired.status).toBe(400);
      expect(expired.body.message).toMatch(/^token has expired/);
    } finally {
      t.clock.set(new Date());
    }
    expect((await meOf(bearer(owner.token))).body.emailVerified).toBe(false);
  });

  test("the link opens a page that changes nothing; its button (a form POST) verifies", async () => {
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const token = (await verificationTokenFor(t, owner.email))!;
    const page = await t.app.request(`/v1/auth/verify-email?token=${token}`, {}, {} as never);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/v1/auth/verify-email">');
    expect(html).toContain(`value="${token}"`);
    expect((await meOf(bearer(owner.token))).body.emailVerified).toBe(false);

    const form = (value: string) =>
      t.app.request(
        "/v1/auth/verify-email",
        { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `token=${value}` },
        {} as never,
      );
    const done = await form(token);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("E-mail address verified");
    expect((await meOf(bearer(owner.token))).body.emailVerified).toBe(true);
    const reused = await form(token);
    expect(reused.status).toBe(400);
    expect(await reused.text()).toContain("already been used");
  });

  test("resend: a new link for the signed-in user, one a minute and 5 a day, 409 once verified, dashboard only", async () => {
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const resend = () => t.request("POST", "/v1/auth/resend-verification", { headers: bearer(owner.token) });
    const soon = await resend();
    expect(soon.status).toBe(429);
    expect(soon.headers.get("retry-after")).toBe("60");
    const base = t.clock.now().getTime();
    try {
      for (let i = 1; i <= 4; i++) {
        t.clock.set(new Date(base + i * 61_000));
        const sent = await resend();
        expect(sent.status).toBe(202);
        expect(sent.body).toEqual({ email: owner.email, expiresAt: new Date(base + i * 61_000 + 24 * 3600_000).toISOString() });
      }
      expect(await mailTo(owner.email)).toHaveLength(5);
      t.clock.set(new Date(base + 5 * 61_000));
      const capped = await resend();
      expect(capped.status).toBe(429);
      expect(Number(capped.headers.get("retry-after"))).toBeGreaterThan(23 * 3600);
      // Every link stays valid until it expires; the newest one works.
      expect((await verify(await verificationTokenFor(t, owner.email))).status).toBe(200);
      expect((await resend()).status).toBe(409);
    } finally {
      t.clock.set(new Date());
    }
    const { key } = await createKey(t, owner.token);
    expect((await t.request("POST", "/v1/auth/resend-verification", { headers: { "x-api-key": key } })).status).toBe(401);
  });

  test("an added user gets no e-mail when added, is unverified, and can ask for a link", async () => {
    const owner = await signUpTenant(t);
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    expect(await mailTo(member.email)).toHaveLength(0);
    expect((await meOf(bearer(member.token))).body.emailVerified).toBe(false);
    expect((await meOf(bearer(owner.token))).body.emailVerified).toBe(true);
    expect((await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(member.token) })).status).toBe(202);
    expect((await verify(await verificationTokenFor(t, member.email))).status).toBe(200);
    expect((await meOf(bearer(member.token))).body.emailVerified).toBe(true);
  });

  test("links are counted per address: removing the user and adding the address again does not start a new budget (an audit sent 10 a minute that way)", async () => {
    const owner = await signUpTenant(t);
    const target = uniqueEmail("target");
    const cycle = async () => {
      const added = await t.request("POST", "/v1/users", { body: { email: target, password: PASSWORD, role: "MEMBER" }, headers: bearer(owner.token) });
      expect(added.status).toBe(201);
      const login = await t.request("POST", "/v1/auth/login", { body: { email: target, password: PASSWORD } });
      const resent = await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(login.body.accessToken) });
      expect((await t.request("DELETE", `/v1/users/${added.body.id}`, { headers: bearer(owner.token) })).status).toBe(204);
      return resent;
    };
    expect((await cycle()).status).toBe(202);
    const again = await cycle();
    expect(again.status).toBe(429);
    expect(again.headers.get("retry-after")).toBe("60");
    expect(await mailTo(target)).toHaveLength(1);
    // Concurrent resends for one address pass the limit once.
    const member = await addUserWithRole(t, owner.token, "MEMBER");
    const results = await Promise.all(Array.from({ length: 5 }, () => t.request("POST", "/v1/auth/resend-verification", { headers: bearer(member.token) })));
    expect(results.map((r) => r.status).sort()).toEqual([202, 429, 429, 429, 429]);
  });

  test("signup's link counts against the address's budget too: signing up, adding a second OWNER and removing itself, again and again, mails a stranger's address once a minute at most (an audit's loop sent one per signup)", async () => {
    const victim = uniqueEmail("victim");
    const rounds = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const signup = await t.request("POST", "/v1/auth/signup", { body: { email: victim, password: PASSWORD, companyName: `Spam ${i}` } });
        expect(signup.status).toBe(201);
        const token = signup.body.accessToken as string;
        const other = await t.request("POST", "/v1/users", {
          body: { email: uniqueEmail("accomplice"), password: PASSWORD, role: "OWNER" },
          headers: bearer(token),
        });
        expect(other.status).toBe(201);
        expect((await t.request("DELETE", `/v1/users/${signup.body.user.id}`, { headers: bearer(token) })).status).toBe(204);
      }
    };
    await rounds(4);
    expect(await mailTo(victim)).toHaveLength(1);
    // A minute on (the links sent so far made a minute older: sessions are checked against real time), one more;
    // never past 5 in 24 hours.
    for (let minute = 0; minute < 7; minute++) {
      await t.db
        .update(emailVerifications)
        .set({ createdAt: sql`${emailVerifications.createdAt} - 61000` as never })
        .where(eq(emailVerifications.email, victim));
      await rounds(2);
    }
    expect(await mailTo(victim)).toHaveLength(5);
  });
});

describe("rate limits of signup and login", () => {
  test("signup is limited per client IP: 429 with Retry-After, other IPs unaffected", async () => {
    const app = await createTestApp({ signupLimit: 2 });
    try {
      const signup = (ip: string) =>
        app.request("POST", "/v1/auth/signup", {
          body: { email: uniqueEmail(), password: PASSWORD, companyName: "Acme" },
          headers: { "cf-connecting-ip": ip },
        });
      expect((await signup("203.0.113.1")).status).toBe(201);
      expect((await signup("203.0.113.1")).status).toBe(201);
      const third = await signup("203.0.113.1");
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBe("60");
      expect(third.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      // Counted before validation: a malformed signup spends the budget too.
      expect((await app.request("POST", "/v1/auth/signup", { body: {}, headers: { "cf-connecting-ip": "203.0.113.1" } })).status).toBe(429);
      expect((await signup("203.0.113.2")).status).toBe(201);
    } finally {
      app.close();
    }
  });

  test("login is limited per account across IPs, and other accounts are unaffected", async () => {
    const app = await createTestApp({ loginLimit: 3 });
    try {
      const victim = await signUpTenant(app);
      const other = await signUpTenant(app);
      const login = (email: string, password: string, ip: string) =>
        app.request("POST", "/v1/auth/login", { body: { email, password }, headers: { "cf-connecting-ip": ip } });
      for (let i = 0; i < 3; i++) expect((await login(victim.email, "wrong password!!", `198.51.100.${i}`)).status).toBe(401);
      // A fourth IP, the right password, the address in capitals: still the same account's budget.
      const blocked = await login(victim.email.toUpperCase(), PASSWORD, "198.51.100.99");
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get("retry-after")).toBe("60");
      expect((await login(other.email, PASSWORD, "198.51.100.0")).status).toBe(200);
    } finally {
      app.close();
    }
  });
});

describe("ending sessions", () => {
  test("POST /v1/auth/logout ends every session of the user (this one and another device's), not other users'; a new login works", async () => {
    const owner = await signUpTenant(t);
    const colleague = await addUserWithRole(t, owner.token, "ADMIN");
    const secondDevice = (await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).body.accessToken as string;
    expect((await t.request("GET", "/v1/me", { headers: bearer(secondDevice) })).status).toBe(200);

    expect((await t.request("POST", "/v1/auth/logout", { headers: bearer(owner.token) })).status).toBe(204);
    for (const token of [owner.token, secondDevice]) {
      const res = await t.request("GET", "/v1/me", { headers: bearer(token) });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: "Unauthorized" });
    }
    expect((await t.request("GET", "/v1/me", { headers: bearer(colleague.token) })).status).toBe(200);
    const again = await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } });
    expect((await t.request("GET", "/v1/me", { headers: bearer(again.body.accessToken) })).status).toBe(200);
    // An API key is no session: 401.
    const { key } = await createKey(t, again.body.accessToken);
    expect((await t.request("POST", "/v1/auth/logout", { headers: { "x-api-key": key } })).status).toBe(401);
  });

  test("POST /v1/auth/password: the current password is required (400 naming it); the change ends earlier sessions and answers a new one", async () => {
    const owner = await signUpTenant(t);
    const other = (await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).body.accessToken as string;
    const change = (body: unknown, token = owner.token) => t.request("POST", "/v1/auth/password", { body, headers: bearer(token) });
    const NEW = "a different long passphrase";

    const wrong = await change({ currentPassword: "not my password at all", newPassword: NEW });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toEqual(["currentPassword: is not your current password"]);
    const short = await change({ currentPassword: PASSWORD, newPassword: "short" });
    expect(short.status).toBe(400);
    expect(short.body.message[0]).toStartWith("newPassword:");
    expect((await t.request("GET", "/v1/me", { headers: bearer(owner.token) })).status).toBe(200);

    const changed = await change({ currentPassword: PASSWORD, newPassword: NEW });
    expect(changed.status).toBe(200);
    const fresh = changed.body.accessToken;
    expect(typeof fresh).toBe("string");
    expect(Date.parse(changed.body.expiresAt)).toBeGreaterThan(Date.now());
    expect(changed.body.user).toEqual({ id: owner.userId, email: owner.email, role: "OWNER" });
    for (const token of [owner.token, other]) expect((await t.request("GET", "/v1/me", { headers: bearer(token) })).status).toBe(401);
    expect((await t.request("GET", "/v1/me", { headers: bearer(fresh) })).status).toBe(200);
    expect((await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).status).toBe(401);
    expect((await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: NEW } })).status).toBe(200);
  });

  test("a log-out that lands while a password change is under way is not undone: the change answers 401, hands out no session and the password stays (an audit raced the two)", async () => {
    const owner = await signUpTenant(t);
    // The change authenticated first (its principal holds the session version it was checked against); then the log-out landed.
    const principal = await principalForSession(t.db as Db, owner.token, t.deps.jwtSecret);
    if (principal?.kind !== "user") throw new Error("expected the owner's session");
    expect((await t.request("POST", "/v1/auth/logout", { headers: bearer(owner.token) })).status).toBe(204);
    const change = changePassword(
      { db: t.db as Db },
      {
        userId: owner.userId,
        tenantId: principal.tenant.id,
        sessionVersion: principal.sessionVersion,
        currentPassword: PASSWORD,
        newPassword: "a different long passphrase",
      },
    );
    const error = await change.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(toErrorBody(error as DomainError)).toEqual({
      statusCode: 401,
      message: "This session ended while the password was being changed (a log-out); log in again",
      error: "Unauthorized",
    });
    expect((await t.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).status).toBe(200);
    expect((await t.request("GET", "/v1/me", { headers: bearer(owner.token) })).status).toBe(401);
  });
});

test("guesses at the current password spend the account's login budget: 429 with Retry-After once it is spent, and the password stays", async () => {
  const app = await createTestApp({ loginLimit: 3 });
  try {
    const owner = await signUpTenant(app);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await app.request("POST", "/v1/auth/password", {
        body: { currentPassword: `guess number ${i} of many`, newPassword: "an attacker's long password" },
        headers: bearer(owner.token),
      });
      statuses.push(res.status);
      if (res.status === 429) expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    // The same budget as logging in to that account.
    expect((await app.request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } })).status).toBe(429);
    expect((await app.request("GET", "/v1/me", { headers: bearer(owner.token) })).status).toBe(200);
  } finally {
    app.close();
  }
});
