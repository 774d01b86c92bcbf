import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { notifications } from "../../../../db/schema/webhooks.ts";
import type { memoryDeliveryQueue } from "../../../../shared/webhooks/memory-queue.ts";
import { addUserWithRole, bearer, createKey, signUpTenant, verificationTokenFor } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const list = (headers: Record<string, string>, query = "") => t.request("GET", `/v1/notifications${query}`, { headers });
const read = (headers: Record<string, string>, id: string) => t.request("POST", `/v1/notifications/${id}/read`, { headers });
const readAll = (headers: Record<string, string>) => t.request("POST", "/v1/notifications/read-all", { headers });

/** A sandbox tenant with one funded loan: 3 events, so 3 notifications (made by the relay after the request). */
async function tenantWithNotifications() {
  const m = await sandboxTenant(t);
  const loan = await createdLoan(t, m.key);
  const events = (await t.request("GET", `/v1/events?loanId=${loan.id}`, { headers: apiKey(m.key) })).body.data as { id: string; type: string }[];
  return { ...m, loan, events };
}

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
  expect(res.body.message).toHaveLength(fields.length);
};

describe("notifications: happy path", () => {
  test("every event is a notification, newest first in event order, with its e-mail to the owner", async () => {
    const m = await tenantWithNotifications();
    const res = await list(apiKey(m.key));
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((n: { type: string }) => n.type)).toEqual(["loan.funded", "loan.decision", "loan.application_submitted"]);
    expect(res.body.data.map((n: { eventId: string }) => n.eventId)).toEqual(m.events.map((e) => e.id));
    const rows = await t.db.select().from(notifications).where(eq(notifications.tenantId, m.tenantId));
    for (const n of res.body.data) {
      const row = rows.find((r) => r.id === n.id)!;
      expect(n).toEqual({
        id: row.id,
        eventId: row.eventId,
        type: row.eventType,
        mode: "sandbox",
        title: row.title,
        body: row.body,
        createdAt: row.createdAt.toISOString(),
        readAt: null,
        email: { to: m.email.toLowerCase(), status: "PENDING", attempts: 0, error: null, sentAt: null },
      });
      expect(n.title).not.toBe("");
      expect(n.body).toContain(m.loan.id);
    }
    expect((await list(bearer(m.token))).body).toEqual(res.body);
  });

  test("the e-mail goes to the oldest OWNER whose address is verified: a first owner who never verified does not leave every e-mail SKIPPED while a second owner has", async () => {
    const first = await signUpTenant(t, "Acme Pay", { verifyEmail: false });
    const second = await addUserWithRole(t, first.token, "OWNER");
    expect((await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(second.token) })).status).toBe(202);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token: await verificationTokenFor(t, second.email) } })).status).toBe(200);
    const { key } = await createKey(t, first.token);
    await createdLoan(t, key);
    const emails = (await list(apiKey(key))).body.data.map((n: { email: unknown }) => n.email);
    expect(emails).toHaveLength(3);
    for (const e of emails) expect(e).toMatchObject({ to: second.email.toLowerCase(), status: "PENDING" });
  });

  test("a notification is read on its mode's clock, as it was created: after the sandbox clock moved a day, readAt is never before createdAt (it read a day earlier)", async () => {
    const m = await sandboxTenant(t);
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: apiKey(m.key) })).status).toBe(200);
    await createdLoan(t, m.key);
    const [first, ...rest] = (await list(apiKey(m.key))).body.data as { id: string; createdAt: string }[];
    const one = await read(apiKey(m.key), first!.id);
    expect(one.status).toBe(200);
    expect((await readAll(bearer(m.token))).body).toEqual({ updated: rest.length });
    // The test's clock stands still, and a loan's events are stamped a millisecond apart: within a second, not a day.
    for (const n of (await list(apiKey(m.key))).body.data as { createdAt: string; readAt: string }[]) {
      expect(Math.abs(Date.parse(n.readAt) - Date.parse(n.createdAt))).toBeLessThan(1_000);
    }
  });

  test("the e-mail's status, attempts, error and time are shown as recorded", async () => {
    const m = await tenantWithNotifications();
    const [funded, decision] = (await list(apiKey(m.key))).body.data;
    const sentAt = new Date(t.clock.now().getTime() + 1500);
    await t.db.update(notifications).set({ emailStatus: "SENT", emailAttempts: 1, emailSentAt: sentAt }).where(eq(notifications.id, funded.id));
    await t.db
      .update(notifications)
      .set({ emailStatus: "FAILED", emailAttempts: 3, emailError: "provider answered 503" })
      .where(eq(notifications.id, decision.id));
    const [f, d] = (await list(apiKey(m.key))).body.data;
    expect(f.email).toEqual({ to: m.email.toLowerCase(), status: "SENT", attempts: 1, error: null, sentAt: sentAt.toISOString() });
    expect(d.email).toEqual({ to: m.email.toLowerCase(), status: "FAILED", attempts: 3, error: "provider answered 503", sentAt: null });
  });

  test("mark one read: readAt set; again: unchanged (the first readAt stays)", async () => {
    const m = await tenantWithNotifications();
    const [first] = (await list(apiKey(m.key))).body.data;
    const readAtTime = t.clock.now().toISOString();
    const res = await read(apiKey(m.key), first.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...first, readAt: readAtTime });
    t.clock.advance(5);
    const again = await read(bearer(m.token), first.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
  });

  test("unread=true and unread=false filter; read-all marks the rest and counts them", async () => {
    const m = await tenantWithNotifications();
    const all = (await list(apiKey(m.key))).body.data;
    const firstRead = (await read(apiKey(m.key), all[1].id)).body.readAt;
    const ids = async (query: string) => (await list(apiKey(m.key), query)).body.data.map((n: { id: string }) => n.id);
    expect(await ids("?unread=true")).toEqual([all[0].id, all[2].id]);
    expect(await ids("?unread=false")).toEqual([all[1].id]);

    t.clock.advance(5);
    const res = await readAll(apiKey(m.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2 });
    expect(await ids("?unread=true")).toEqual([]);
    const after = (await list(apiKey(m.key))).body.data;
    expect(after.map((n: { readAt: string }) => n.readAt)).toEqual([t.clock.now().toISOString(), firstRead, t.clock.now().toISOString()]);
    expect((await readAll(bearer(m.token))).body).toEqual({ updated: 0 });
  });

  test("pagination: limit and cursor walk every notification once; new ones go on top", async () => {
    const m = await tenantWithNotifications();
    await createdLoan(t, m.key);
    await createdLoan(t, m.key); // 9 notifications
    const all = (await list(apiKey(m.key), "?limit=100")).body.data.map((n: { id: string }) => n.id);
    expect(all).toHaveLength(9);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(apiKey(m.key), `?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...res.body.data.map((n: { id: string }) => n.id));
      cursor = res.body.nextCursor;
      if (pages++ === 0) await createdLoan(t, m.key);
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    // A cursor the service did not seal for this account (crafted the old way, seq:<n>) is refused.
    const crafted = await list(apiKey(m.key), `?cursor=${btoa("seq:1")}`);
    expect(crafted.status).toBe(400);
    expect(JSON.stringify(crafted.body.message)).toContain("cursor");
  });
});

describe("notifications: errors", () => {
  let key: string;
  beforeAll(async () => {
    key = (await sandboxTenant(t)).key;
  });

  test.each([
    ["unread not a boolean", "?unread=yes", "unread"],
    ["limit 0", "?limit=0", "limit"],
    ["limit 101", "?limit=101", "limit"],
    ["a cursor this service never issued", "?cursor=nope", "cursor"],
  ])("%s: 400 naming it", async (_name, query, field) => {
    expectFieldErrors(await list(apiKey(key), query), field);
  });

  test("marking an unknown notification or a non-UUID: 404", async () => {
    for (const id of [crypto.randomUUID(), "nope"]) {
      const res = await read(apiKey(key), id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Notification not found", error: "Not Found" });
    }
  });

  test("a tenant without events has no notifications, and read-all updates none", async () => {
    expect((await list(apiKey(key))).body).toEqual({ data: [], nextCursor: null });
    expect((await readAll(apiKey(key))).body).toEqual({ updated: 0 });
  });
});

describe("notifications: security", () => {
  test("no credentials: 401 on every route", async () => {
    expect((await t.request("GET", "/v1/notifications")).status).toBe(401);
    expect((await t.request("POST", `/v1/notifications/${crypto.randomUUID()}/read`)).status).toBe(401);
    expect((await t.request("POST", "/v1/notifications/read-all")).status).toBe(401);
  });

  test("a MEMBER may read and mark notifications", async () => {
    const m = await tenantWithNotifications();
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const res = await list(bearer(member.token));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    expect((await read(bearer(member.token), res.body.data[0].id)).status).toBe(200);
    expect((await readAll(bearer(member.token))).body).toEqual({ updated: 2 });
  });

  test("tenants never see or mark each other's notifications", async () => {
    const a = await tenantWithNotifications();
    const b = await sandboxTenant(t);
    const theirs = (await list(apiKey(a.key))).body.data;
    expect((await list(apiKey(b.key))).body).toEqual({ data: [], nextCursor: null });
    const res = await read(apiKey(b.key), theirs[0].id);
    expect(res.status).toBe(404);
    expect((await readAll(apiKey(b.key))).body).toEqual({ updated: 0 });
    expect((await list(apiKey(a.key), "?unread=true")).body.data).toHaveLength(3);
    const aPage = await list(apiKey(a.key), "?limit=1");
    // A cursor sealed for a is refused to b (400), never read as a position in b's list.
    const foreign = await list(apiKey(b.key), `?cursor=${aPage.body.nextCursor}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
    expect(JSON.stringify(foreign.body.message)).toContain("cursor");
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error") || line.includes("relay after write failed"))).toEqual([]);
  });
});

describe("notifications: e-mail only to a verified owner", () => {
  test("before the owner verifies, notifications are made but their e-mail is SKIPPED and never queued; after, PENDING and queued", async () => {
    const owner = await signUpTenant(t, "Acme", { verifyEmail: false });
    const { key } = await createKey(t, owner.token);
    const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
    const emailMessages = () => queue.messages.filter((m) => m.body.kind === "email").map((m) => (m.body as { notificationId: string }).notificationId);
    const before = await createdLoan(t, key);
    const skipped = (await list(apiKey(key), "?limit=100")).body.data.filter((n: { body: string }) => n.body.includes(before.id));
    expect(skipped).toHaveLength(3);
    for (const n of skipped) expect(n.email).toEqual({ to: owner.email, status: "SKIPPED", attempts: 0, error: "owner e-mail not verified", sentAt: null });
    for (const n of skipped) expect(emailMessages()).not.toContain(n.id);

    const token = await verificationTokenFor(t, owner.email);
    expect((await t.request("POST", "/v1/auth/verify-email", { body: { token } })).status).toBe(200);
    const after = await createdLoan(t, key);
    const pending = (await list(apiKey(key), "?limit=100")).body.data.filter((n: { body: string }) => n.body.includes(after.id));
    expect(pending).toHaveLength(3);
    for (const n of pending) expect(n.email).toEqual({ to: owner.email, status: "PENDING", attempts: 0, error: null, sentAt: null });
    for (const n of pending) expect(emailMessages()).toContain(n.id);
    // The earlier ones stay skipped: verification does not replay the past.
    for (const n of (await list(apiKey(key), "?limit=100")).body.data.filter((x: { body: string }) => x.body.includes(before.id)))
      expect(n.email.status).toBe("SKIPPED");
  });
});
