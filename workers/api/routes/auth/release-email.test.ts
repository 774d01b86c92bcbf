import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { apiKeys } from "../../../../db/schema/api-keys.ts";
import { emailReleases } from "../../../../db/schema/email-releases.ts";
import { emailVerifications } from "../../../../db/schema/email-verifications.ts";
import { users } from "../../../../db/schema/users.ts";
import { mailbox } from "../../../../db/schema/webhooks.ts";
import { ADDRESS_HELD_MESSAGE, RELEASE_REQUESTED_MESSAGE } from "../../../../shared/auth/email-release.ts";
import { newId } from "../../../../shared/domain/ids.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { bearer, createKey, PASSWORD, signUpTenant, uniqueEmail, verificationTokenFor } from "../../../../shared/testing/fixtures.ts";
import { MAX_USERS_PER_TENANT } from "../../../../shared/users/add-user.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const mailTo = async (email: string) =>
  await t.db.select({ subject: mailbox.subject, body: mailbox.body }).from(mailbox).where(eq(mailbox.toAddress, email.toLowerCase())).orderBy(sql`rowid`);
const releaseMails = async (email: string) => (await mailTo(email)).filter((m) => m.subject === "[svc credit] Free this e-mail address");
/** The token of the newest release link e-mailed to `email`. */
const releaseTokenFor = async (email: string) => {
  const mails = await releaseMails(email);
  return /\/v1\/auth\/release-email\?token=([0-9A-Za-z]{43})\n/.exec(mails.at(-1)?.body ?? "")?.[1];
};
const askRelease = (email: string, ip = "192.0.2.10") => t.request("POST", "/v1/auth/release-email", { body: { email }, headers: { "cf-connecting-ip": ip } });
const confirm = (token: unknown) => t.request("POST", "/v1/auth/release-email/confirm", { body: { token } });
const signUp = (email: string, companyName = "Victim Co", releaseToken?: string) =>
  t.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName, ...(releaseToken ? { releaseToken } : {}) } });
const userByEmail = async (email: string) => (await t.db.select({ id: users.id }).from(users).where(eq(users.email, email.toLowerCase())))[0];

describe("freeing an e-mail address someone else used", () => {
  test("an address added to another tenant: signup is 409, the address's owner frees it by e-mail, and then signs up", async () => {
    const squatter = await signUpTenant(t, "Squat Inc");
    const victim = uniqueEmail("victim");
    const added = await t.request("POST", "/v1/users", { body: { email: victim, password: PASSWORD, role: "ADMIN" }, headers: bearer(squatter.token) });
    expect(added.status).toBe(201);
    // The squatting admin signs in and makes a key; the key is the tenant's and stays.
    const squatSession = (await t.request("POST", "/v1/auth/login", { body: { email: victim, password: PASSWORD } })).body.accessToken as string;
    const squatKey = await createKey(t, squatSession, "squatter's key");

    const blocked = await signUp(victim);
    expect(blocked.status).toBe(409);
    expect(blocked.body).toEqual({ statusCode: 409, message: expect.stringContaining("POST /v1/auth/release-email"), error: "Conflict" });

    const asked = await askRelease(victim.toUpperCase());
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({ email: victim, message: RELEASE_REQUESTED_MESSAGE });
    const [mail] = await releaseMails(victim);
    expect(mail).toBeDefined();
    // Fixed text: nothing the squatting tenant typed.
    expect(mail!.body).not.toContain("Squat");
    const token = await releaseTokenFor(victim);
    expect(token).toBeDefined();
    const [row] = await t.db.select().from(emailReleases).where(eq(emailReleases.email, victim));
    expect(row).toMatchObject({ userId: added.body.id, usedAt: null });
    expect(JSON.stringify(row)).not.toContain(token!);

    // The link's page changes nothing; its button is a form POST to the confirmation.
    const page = await t.app.request(`/v1/auth/release-email?token=${token}`, {}, {} as never);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/v1/auth/release-email/confirm">');
    expect(html).toContain(`value="${token}"`);
    expect(await userByEmail(victim)).toBeDefined();

    const freed = await t.app.request(
      "/v1/auth/release-email/confirm",
      { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `token=${token}` },
      {} as never,
    );
    expect(freed.status).toBe(200);
    expect(await freed.text()).toContain("E-mail address freed");
    expect(await userByEmail(victim)).toBeUndefined();
    // The squatter's session ends; the tenant keeps its key, no longer naming the user.
    expect((await t.request("GET", "/v1/me", { headers: bearer(squatSession) })).status).toBe(401);
    expect((await t.request("GET", "/v1/me", { headers: { "x-api-key": squatKey.key } })).status).toBe(200);
    expect((await t.db.select({ by: apiKeys.createdByUserId }).from(apiKeys).where(eq(apiKeys.id, squatKey.id)))[0]).toEqual({ by: null });
    expect((await t.request("GET", "/v1/users", { headers: bearer(squatter.token) })).body.data.map((u: { email: string }) => u.email)).toEqual([
      squatter.email,
    ]);

    // For 24 hours the address is held for the link's holder: the squatter cannot take it back.
    const readd = await t.request("POST", "/v1/users", { body: { email: victim, password: PASSWORD, role: "ADMIN" }, headers: bearer(squatter.token) });
    expect(readd.status).toBe(409);
    expect(readd.body).toEqual({ statusCode: 409, message: ADDRESS_HELD_MESSAGE, error: "Conflict" });
    expect((await signUp(victim, "Squat again")).body).toEqual({ statusCode: 409, message: ADDRESS_HELD_MESSAGE, error: "Conflict" });
    expect((await signUp(victim, "Squat again", "B".repeat(43))).status).toBe(409);
    const signedUp = await signUp(victim, "Victim Co", token);
    expect(signedUp.status).toBe(201);
    expect(signedUp.body.user.email).toBe(victim);
    // The link is single use.
    const again = await confirm(token);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ statusCode: 400, message: "token has already been used", error: "Bad Request" });
  });

  test("a signup made with someone else's address is freed too, even as its tenant's only OWNER", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Impostor Ltd")).status).toBe(201);
    expect((await askRelease(victim)).status).toBe(202);
    const token = await releaseTokenFor(victim);
    const freed = await confirm(token);
    expect(freed.status).toBe(200);
    expect(freed.body).toEqual({ email: victim, released: true, heldUntil: new Date(t.clock.now().getTime() + 24 * 3600_000).toISOString() });
    expect((await t.request("POST", "/v1/auth/login", { body: { email: victim, password: PASSWORD } })).status).toBe(401);
    expect((await signUp(victim, "Victim Co", token)).status).toBe(201);
  });

  test("the owner who freed the address gets a verification link at signup, whatever links the squatter had spent of the address's budget (a review had none sent, and resend 429, for a day)", async () => {
    const victim = uniqueEmail("victim");
    const squat = await signUp(victim, "Squat Inc");
    expect(squat.status).toBe(201);
    const aMinuteEarlier = () =>
      t.db
        .update(emailVerifications)
        .set({ createdAt: sql`${emailVerifications.createdAt} - 61000` as never })
        .where(eq(emailVerifications.email, victim));
    for (let i = 0; i < 4; i++) {
      await aMinuteEarlier();
      expect((await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(squat.body.accessToken) })).status).toBe(202);
    }
    const links = async () => (await mailTo(victim)).filter((m) => m.body.includes("/v1/auth/verify-email?token="));
    expect(await links()).toHaveLength(5);
    // The release comes later than the squatter's links (the test's clock stands still).
    await aMinuteEarlier();
    expect((await askRelease(victim, "192.0.2.77")).status).toBe(202);
    const token = await releaseTokenFor(victim);
    expect((await confirm(token)).status).toBe(200);
    const owner = await signUp(victim, "Owner Co", token);
    expect(owner.status).toBe(201);
    expect(await links()).toHaveLength(6);
    // From the release on, the budget counts again: one a minute.
    expect((await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(owner.body.accessToken) })).status).toBe(429);
  });

  test("the hold lasts 24 hours: then anyone may use the address again; nothing is held when the link freed nothing", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Squat")).status).toBe(201);
    expect((await askRelease(victim)).status).toBe(202);
    expect((await confirm(await releaseTokenFor(victim))).status).toBe(200);
    const start = t.clock.now();
    try {
      t.clock.advance(24 * 3600_000 - 1);
      expect((await signUp(victim, "Squat again")).status).toBe(409);
      t.clock.advance(1);
      expect((await signUp(victim, "Anyone")).status).toBe(201);
    } finally {
      t.clock.set(start);
    }
    // A link that freed nothing (the account verified meanwhile) holds nothing.
    const holder = await signUpTenant(t, "Holder", { verifyEmail: false });
    expect((await askRelease(holder.email)).status).toBe(202);
    const token = await releaseTokenFor(holder.email);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token: await verificationTokenFor(t, holder.email) } })).status).toBe(200);
    expect((await confirm(token)).status).toBe(409);
    expect((await t.db.select({ freedAt: emailReleases.freedAt }).from(emailReleases).where(eq(emailReleases.email, holder.email)))[0]).toEqual({
      freedAt: null,
    });
  });

  test("a release token in a signup must look like one: 400 naming it", async () => {
    const res = await signUp(uniqueEmail(), "Acme", "not a token!");
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual([expect.stringMatching(/^releaseToken: /)]);
  });

  test("a verified address is never freed, and unknown or verified addresses get the same answer and no e-mail", async () => {
    const owner = await signUpTenant(t); // verified through its link
    const unknown = uniqueEmail("nobody");
    const forVerified = await askRelease(owner.email);
    const forUnknown = await askRelease(unknown);
    expect(forVerified.status).toBe(202);
    expect(forUnknown.status).toBe(202);
    expect(forVerified.body.message).toBe(forUnknown.body.message);
    expect(await releaseMails(owner.email)).toEqual([]);
    expect(await mailTo(unknown)).toEqual([]);
    expect(await t.db.select().from(emailReleases).where(eq(emailReleases.email, owner.email))).toEqual([]);
  });

  test("an account that verifies after the link went out keeps its address: 409, and the token is spent", async () => {
    const holder = await signUpTenant(t, "Real Owner", { verifyEmail: false });
    expect((await askRelease(holder.email)).status).toBe(202);
    const token = await releaseTokenFor(holder.email);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token: await verificationTokenFor(t, holder.email) } })).status).toBe(200);
    const refused = await confirm(token);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ statusCode: 409, message: expect.stringMatching(/^This link changed nothing/), error: "Conflict" });
    expect((await t.request("GET", "/v1/me", { headers: bearer(holder.token) })).status).toBe(200);
    expect((await confirm(token)).body.message).toBe("token has already been used");
  });

  test("a link frees the address from whichever unverified account holds it when followed: removing and adding it again does not defeat it", async () => {
    const squatter = await signUpTenant(t, "Squat Inc");
    const victim = uniqueEmail("victim");
    const add = () => t.request("POST", "/v1/users", { body: { email: victim, password: PASSWORD, role: "MEMBER" }, headers: bearer(squatter.token) });
    const first = await add();
    expect((await askRelease(victim)).status).toBe(202);
    const token = await releaseTokenFor(victim);
    // The squatter sees it coming: removes the user and adds the address again (a new user id).
    expect((await t.request("DELETE", `/v1/users/${first.body.id}`, { headers: bearer(squatter.token) })).status).toBe(204);
    const second = await add();
    expect(second.status).toBe(201);
    const res = await confirm(token);
    expect(res.status).toBe(200);
    expect(await userByEmail(victim)).toBeUndefined();
    expect((await signUp(victim, "Victim Co", token)).status).toBe(201);
  });

  test("an address freed twice within the hold admits the holder of either link", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Squat")).status).toBe(201);
    const start = t.clock.now();
    try {
      expect((await askRelease(victim)).status).toBe(202);
      const first = await releaseTokenFor(victim);
      expect((await confirm(first)).status).toBe(200);
      // The owner signs up, does not verify, and someone frees it again.
      expect((await signUp(victim, "Victim Co", first)).status).toBe(201);
      t.clock.advance(61_000);
      expect((await askRelease(victim)).status).toBe(202);
      const second = await releaseTokenFor(victim);
      expect(second).not.toBe(first);
      expect((await confirm(second)).status).toBe(200);
      expect((await signUp(victim, "Anyone")).status).toBe(409);
      expect((await signUp(victim, "Victim Co", second)).status).toBe(201);
    } finally {
      t.clock.set(start);
    }
  });

  test("freeing a tenant's only OWNER makes its longest-standing ADMIN the OWNER (else its first MEMBER); another OWNER stays as it is", async () => {
    const roles = async (tenantId: string) =>
      (await t.db.select({ email: users.email, role: users.role }).from(users).where(eq(users.tenantId, tenantId))).map((u) => `${u.role}`).sort();
    const free = async (email: string) => {
      expect((await askRelease(email)).status).toBe(202);
      expect((await confirm(await releaseTokenFor(email))).status).toBe(200);
    };
    const addAs = async (token: string, role: "ADMIN" | "MEMBER" | "OWNER") => {
      const email = uniqueEmail(role.toLowerCase());
      const res = await t.request("POST", "/v1/users", { body: { email, password: PASSWORD, role }, headers: bearer(token) });
      expect(res.status).toBe(201);
      return { email, id: res.body.id as string };
    };

    const withAdmins = await signUpTenant(t, "Admins", { verifyEmail: false });
    await addAs(withAdmins.token, "MEMBER");
    const admin1 = await addAs(withAdmins.token, "ADMIN");
    const admin2 = await addAs(withAdmins.token, "ADMIN");
    // Added later (the tests' clock stands still).
    await t.db
      .update(users)
      .set({ createdAt: new Date(t.clock.now().getTime() + 1000) })
      .where(eq(users.id, admin2.id));
    await free(withAdmins.email);
    expect(await roles(withAdmins.tenantId)).toEqual(["ADMIN", "MEMBER", "OWNER"]);
    expect((await t.db.select({ role: users.role }).from(users).where(eq(users.id, admin1.id)))[0]).toEqual({ role: "OWNER" });

    const withMember = await signUpTenant(t, "Members", { verifyEmail: false });
    const member = await addAs(withMember.token, "MEMBER");
    await free(withMember.email);
    expect((await t.db.select({ role: users.role }).from(users).where(eq(users.id, member.id)))[0]).toEqual({ role: "OWNER" });

    const twoOwners = await signUpTenant(t, "Owners", { verifyEmail: false });
    await addAs(twoOwners.token, "OWNER");
    await addAs(twoOwners.token, "ADMIN");
    await free(twoOwners.email);
    expect(await roles(twoOwners.tenantId)).toEqual(["ADMIN", "OWNER"]);

    // A released ADMIN promotes nobody.
    const owner = await signUpTenant(t, "Keeps");
    const admin = await addAs(owner.token, "ADMIN");
    await addAs(owner.token, "MEMBER");
    await free(admin.email);
    expect(await roles(owner.tenantId)).toEqual(["MEMBER", "OWNER"]);
  });

  test("concurrent requests for one address send one link", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Squat")).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => askRelease(victim, `192.0.2.${50 + i}`)));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 202]);
    expect(await releaseMails(victim)).toHaveLength(1);
  });

  test("links are limited per address: one a minute, three a day; the answer does not change", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Squat")).status).toBe(201);
    const start = t.clock.now();
    try {
      expect((await askRelease(victim)).status).toBe(202);
      const soon = await askRelease(victim);
      expect(soon.status).toBe(202);
      expect(soon.body.message).toBe(RELEASE_REQUESTED_MESSAGE);
      expect(await releaseMails(victim)).toHaveLength(1);
      for (let i = 0; i < 4; i++) {
        t.clock.advance(61_000);
        expect((await askRelease(victim)).status).toBe(202);
      }
      expect(await releaseMails(victim)).toHaveLength(3);
      t.clock.advance(24 * 3600_000);
      expect((await askRelease(victim)).status).toBe(202);
      expect(await releaseMails(victim)).toHaveLength(4);
    } finally {
      t.clock.set(start);
    }
  });

  test("wrong, malformed, missing and expired tokens are 400s; a verification token frees nothing and a release token verifies nothing", async () => {
    const holder = await signUpTenant(t, "Holder", { verifyEmail: false });
    expect((await confirm("A".repeat(43))).body).toEqual({ statusCode: 400, message: "token is not a valid release token", error: "Bad Request" });
    expect((await confirm("x'; DROP TABLE users; --")).status).toBe(400);
    const missing = await t.request("POST", "/v1/auth/release-email/confirm", { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toEqual([expect.stringMatching(/^token: /)]);

    const verification = await verificationTokenFor(t, holder.email);
    expect((await confirm(verification)).body.message).toBe("token is not a valid release token");
    expect((await askRelease(holder.email)).status).toBe(202);
    const release = await releaseTokenFor(holder.email);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token: release } })).body.message).toBe("token is not a valid verification token");

    const start = t.clock.now();
    t.clock.advance(24 * 3600_000 + 1);
    try {
      const expired = await confirm(release);
      expect(expired.status).toBe(400);
      expect(expired.body.message).toMatch(/^token has expired/);
    } finally {
      t.clock.set(start);
    }
    expect((await t.request("GET", "/v1/me", { headers: bearer(holder.token) })).status).toBe(200);
  });

  test("two concurrent confirmations: one frees, the other is told the token is used", async () => {
    const victim = uniqueEmail("victim");
    expect((await signUp(victim, "Squat")).status).toBe(201);
    expect((await askRelease(victim)).status).toBe(202);
    const token = await releaseTokenFor(victim);
    const results = await Promise.all([confirm(token), confirm(token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await userByEmail(victim)).toBeUndefined();
  });

  test("requests are limited per client IP: 429 with Retry-After", async () => {
    const app = await createTestApp({ signupLimit: 2 });
    try {
      const ask = (ip: string) => app.request("POST", "/v1/auth/release-email", { body: { email: uniqueEmail() }, headers: { "cf-connecting-ip": ip } });
      expect((await ask("203.0.113.7")).status).toBe(202);
      expect((await ask("203.0.113.7")).status).toBe(202);
      const third = await ask("203.0.113.7");
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBe("60");
      expect(third.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
      expect((await ask("203.0.113.8")).status).toBe(202);
    } finally {
      app.close();
    }
  });

  test("bad bodies are 400s naming the field", async () => {
    const res = await t.request("POST", "/v1/auth/release-email", { body: { email: "not an address" } });
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual([expect.stringMatching(/^email: /)]);
  });
});

describe("a tenant's users are capped", () => {
  test(`a tenant holds at most ${MAX_USERS_PER_TENANT} users: 409 beyond, and a removal makes room`, async () => {
    const owner = await signUpTenant(t, "Many Users");
    // The owner is one; fill the rest straight in the database (hashing 49 passwords through the API is slow).
    const [me] = await t.db.select().from(users).where(eq(users.id, owner.userId));
    const fillers = Array.from({ length: MAX_USERS_PER_TENANT - 1 }, () => ({ ...me!, id: newId(), email: uniqueEmail("filler"), role: "MEMBER" as const }));
    await t.db.insert(users).values(fillers);
    const add = () =>
      t.request("POST", "/v1/users", { body: { email: uniqueEmail("extra"), password: PASSWORD, role: "MEMBER" }, headers: bearer(owner.token) });
    const refused = await add();
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ statusCode: 409, message: expect.stringContaining(`${MAX_USERS_PER_TENANT} users`), error: "Conflict" });
    expect((await t.request("DELETE", `/v1/users/${fillers[0]!.id}`, { headers: bearer(owner.token) })).status).toBe(204);
    expect((await add()).status).toBe(201);
    // Another tenant is not affected.
    const other = await signUpTenant(t, "Few Users");
    expect(
      (await t.request("POST", "/v1/users", { body: { email: uniqueEmail("extra"), password: PASSWORD, role: "MEMBER" }, headers: bearer(other.token) }))
        .status,
    ).toBe(201);
  });
});
