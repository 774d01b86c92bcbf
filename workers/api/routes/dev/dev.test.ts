import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isNull } from "drizzle-orm";
import { mailbox } from "../../../../db/schema/webhooks.ts";
import { newId } from "../../../../shared/domain/ids.ts";
import { addUserWithRole, PASSWORD, bearer, signUpTenant } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The verification links signup sent; these tests count notification mail only. */
const dropAccountMail = () => t.db.delete(mailbox).where(isNull(mailbox.notificationId));

const mailboxOf = (token: string, query = "") => t.request("GET", `/v1/dev/mailbox${query}`, { headers: bearer(token) });

/** What the development mail provider writes when it "sends" a message. */
async function deliverMail(to: string, subject: string, offsetMs: number) {
  const row = {
    id: newId(),
    toAddress: to,
    subject,
    body: `Body of ${subject}`,
    notificationId: newId(),
    createdAt: new Date(t.clock.now().getTime() + offsetMs),
  };
  await t.db.insert(mailbox).values(row);
  return row;
}

describe("dev mailbox (local runs)", () => {
  test("lists the messages to the calling user's own address, newest first: not a colleague's, not another tenant's", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const member = await addUserWithRole(t, a.token, "MEMBER");
    await dropAccountMail();
    const first = await deliverMail(a.email, "Loan funded", 1);
    const second = await deliverMail(a.email.toUpperCase(), "Loan repaid", 2); // addresses match case-insensitively
    const toMember = await deliverMail(member.email, "Welcome", 3);
    await deliverMail(b.email, "Not for a", 4);
    await deliverMail("someone@elsewhere.example", "Not for anyone here", 5);

    const res = await mailboxOf(a.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: second.id,
          to: second.toAddress,
          subject: "Loan repaid",
          body: "Body of Loan repaid",
          notificationId: second.notificationId,
          createdAt: second.createdAt.toISOString(),
        },
        {
          id: first.id,
          to: first.toAddress,
          subject: "Loan funded",
          body: "Body of Loan funded",
          notificationId: first.notificationId,
          createdAt: first.createdAt.toISOString(),
        },
      ],
      nextCursor: null,
    });
    // A MEMBER reads its own mail, never the owner's (whose verification link it could follow); the other tenant only its own.
    expect((await mailboxOf(member.token)).body.data.map((m: { id: string }) => m.id)).toEqual([toMember.id]);
    expect((await mailboxOf(b.token)).body.data.map((m: { subject: string }) => m.subject)).toEqual(["Not for a"]);
  });

  test("an address freed by a removal and added again (by any tenant) reads only the mail sent since", async () => {
    const a = await signUpTenant(t);
    const b = await signUpTenant(t);
    const leaving = await addUserWithRole(t, a.token, "MEMBER");
    await dropAccountMail();
    await deliverMail(leaving.email, "A's secret notice", -60_000);
    expect((await t.request("DELETE", `/v1/users/${leaving.id}`, { headers: bearer(a.token) })).status).toBe(204);
    const readded = await t.request("POST", "/v1/users", { body: { email: leaving.email, password: PASSWORD, role: "MEMBER" }, headers: bearer(b.token) });
    expect(readded.status).toBe(201);
    const later = await deliverMail(leaving.email, "B's welcome", 60_000);
    const login = await t.request("POST", "/v1/auth/login", { body: { email: leaving.email, password: PASSWORD } });
    expect((await mailboxOf(login.body.accessToken)).body.data.map((m: { id: string }) => m.id)).toEqual([later.id]);
  });

  test("pagination and a bad limit or cursor (400 naming it)", async () => {
    const a = await signUpTenant(t);
    await dropAccountMail();
    for (let i = 0; i < 3; i++) await deliverMail(a.email, `m${i}`, i);
    const first = await mailboxOf(a.token, "?limit=2");
    expect(first.body.data.map((m: { subject: string }) => m.subject)).toEqual(["m2", "m1"]);
    const second = await mailboxOf(a.token, `?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ subject: "m0" })], nextCursor: null });
    for (const [query, field] of [
      ["?limit=0", "limit"],
      ["?cursor=nope", "cursor"],
    ]) {
      const res = await mailboxOf(a.token, query);
      expect(res.status).toBe(400);
      expect(res.body.message).toEqual([expect.stringMatching(new RegExp(`^${field}: `))]);
    }
  });

  test("dashboard sessions only: no credentials or an API key: 401", async () => {
    const m = await sandboxTenant(t);
    expect((await t.request("GET", "/v1/dev/mailbox")).status).toBe(401);
    const withKey = await t.request("GET", "/v1/dev/mailbox", { headers: apiKey(m.key) });
    expect(withKey.status).toBe(401);
  });

  describe("in production", () => {
    beforeAll(() => {
      t.deps.environment = "production";
    });
    afterAll(() => {
      t.deps.environment = "development";
    });

    test("the route does not exist: 404 as for any unknown path, with or without credentials", async () => {
      const a = await signUpTenant(t);
      await deliverMail(a.email, "secret reset link", 1);
      const unknown = await t.request("GET", "/v1/dev/nothing-here");
      for (const headers of [{}, bearer(a.token)]) {
        const res = await t.request("GET", "/v1/dev/mailbox", { headers });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, message: "No route for GET /v1/dev/mailbox", error: "Not Found" });
        expect(unknown.body).toEqual({ statusCode: 404, message: "No route for GET /v1/dev/nothing-here", error: "Not Found" });
      }
    });
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
