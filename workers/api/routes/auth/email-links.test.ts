import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { count, eq, sql } from "drizzle-orm";
import { mailbox } from "../../../../db/schema/webhooks.ts";
import { users } from "../../../../db/schema/users.ts";
import { bearer, signUpTenant, uniqueEmail } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";

/**
 * Links in account e-mail (verification, release) are built on `BASE_URL`.
 * Outside development a missing `BASE_URL` is a 503 naming it, and nothing
 * is written or sent: the request's own origin comes from its Host header,
 * which the sender chooses, so it never stands in. Under development (npm
 * run dev, the tests) it still does.
 */

const PASSWORD = "correct horse battery staple";
const EVIL = "https://evil.example";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
beforeEach(() => {
  t.deps.environment = "development";
  t.deps.baseUrl = "http://api.svc-credit.test";
});

const mailTo = (email: string) => t.db.select().from(mailbox).where(eq(mailbox.toAddress, email)).orderBy(sql`rowid`);
const notConfigured = { statusCode: 503, message: expect.stringMatching(/^This worker is not configured: missing var BASE_URL/), error: "Service Unavailable" };
/** A request as an attacker sends it: to the service, with a Host header of their own (what `new URL(request.url)` then reads). */
const fromEvil = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) => t.request(method, `${EVIL}${path}`, init);

describe("outside development without BASE_URL", () => {
  test("signup: 503 naming BASE_URL, no account, no e-mail", async () => {
    t.deps.environment = "production";
    t.deps.baseUrl = null;
    const email = uniqueEmail();
    const res = await fromEvil("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName: "Acme" } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual(notConfigured);
    expect((await t.db.select({ n: count() }).from(users).where(eq(users.email, email)))[0]!.n).toBe(0);
    expect(await mailTo(email)).toEqual([]);
  });

  test("resend-verification and release-email: 503 naming BASE_URL, no e-mail", async () => {
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const before = (await mailTo(owner.email)).length;
    t.deps.environment = "production";
    t.deps.baseUrl = null;
    const resend = await fromEvil("POST", "/v1/auth/resend-verification", { headers: bearer(owner.token) });
    expect(resend.status).toBe(503);
    expect(resend.body).toEqual(notConfigured);
    const release = await fromEvil("POST", "/v1/auth/release-email", { body: { email: owner.email } });
    expect(release.status).toBe(503);
    expect(release.body).toEqual(notConfigured);
    expect(await mailTo(owner.email)).toHaveLength(before);
  });
});

test("outside development with BASE_URL: the link is BASE_URL's, whatever Host the request names", async () => {
  t.deps.environment = "production";
  t.deps.baseUrl = "https://api.lendco.com";
  const email = uniqueEmail();
  expect((await fromEvil("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, companyName: "Acme" } })).status).toBe(201);
  const [mail] = await mailTo(email);
  expect(mail!.body).toContain("https://api.lendco.com/v1/auth/verify-email?token=");
  expect(mail!.body).not.toContain("evil.example");
});

test("under development without BASE_URL: the request's origin, as before (npm run dev, the tests)", async () => {
  t.deps.baseUrl = null;
  const email = uniqueEmail();
  const res = await t.request("POST", "http://127.0.0.1:8787/v1/auth/signup", { body: { email, password: PASSWORD, companyName: "Acme" } });
  expect(res.status).toBe(201);
  const [mail] = await mailTo(email);
  expect(mail!.body).toContain("http://127.0.0.1:8787/v1/auth/verify-email?token=");
});
