import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mailbox, notifications } from "../../db/schema/webhooks.ts";
import { users } from "../../db/schema/users.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { addUserWithRole, bearer, signUpTenant, verificationTokenFor } from "../testing/fixtures.ts";
import { newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { databaseMailbox, httpMailProvider, type MailProvider } from "./mail-provider.ts";
import { EMAIL_LEASE_MS, sendNotificationEmail } from "./send-notification-email.ts";
import { fixedClock } from "../domain/clock.ts";
import { events } from "../../db/schema/events.ts";
import { createDb } from "../../db/create-db.ts";
import type { D1FaultPolicy } from "../chaos/faults.ts";
import { isTransientError } from "../http/transient-errors.ts";
import { overloadedLibsql } from "../testing/overloaded-libsql.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Owner = Awaited<ReturnType<typeof signUpTenant>>;

/** A `liquidity.low` event of `owner`'s tenant and its notification, e-mail PENDING to `emailTo` (the owner by default). */
async function notification(owner?: Owner, emailTo?: string) {
  owner ??= await signUpTenant(t);
  const eventId = newId();
  const seq = Math.floor(Math.random() * 1e9);
  const envelope = {
    id: eventId,
    type: "liquidity.low" as const,
    createdAt: new Date().toISOString(),
    tenantId: owner.tenantId,
    mode: "sandbox" as const,
    data: {},
    program: null,
    channel: null,
  };
  await t.db.insert(events).values({
    id: eventId,
    seq,
    tenantId: owner.tenantId,
    type: "liquidity.low",
    loanId: null,
    envelope,
    createdAt: new Date(),
  });
  const id = newId();
  await t.db.insert(notifications).values({
    id,
    tenantId: owner.tenantId,
    eventId,
    eventType: "liquidity.low",
    title: "Liquidity is running low",
    body: "Pool headroom: 10.00 USDC.",
    emailTo: emailTo ?? owner.email,
    emailStatus: "PENDING",
    eventSeq: seq,
    createdAt: new Date(),
  });
  return { id, owner };
}
const row = async (id: string) => (await t.db.select().from(notifications).where(eq(notifications.id, id)))[0]!;

test("sent once to the owner through the local mailbox; duplicates send nothing more", async () => {
  const { id, owner } = await notification();
  const deps = { db: t.db, mail: databaseMailbox(t.db), clock: t.clock };
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  await Promise.all([sendNotificationEmail(deps, id), sendNotificationEmail(deps, id)]);
  const mails = await t.db.select().from(mailbox).where(eq(mailbox.notificationId, id));
  expect(mails).toEqual([
    expect.objectContaining({ toAddress: owner.email, subject: "[svc credit] Liquidity is running low", body: "Pool headroom: 10.00 USDC." }),
  ]);
  expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailAttempts: 1, emailError: null });
});

test("a failing provider is retried with backoff, its error shown, then FAILED after 3 attempts", async () => {
  const { id } = await notification();
  let calls = 0;
  const failing: MailProvider = { send: async () => (calls++, { ok: false, error: "HTTP 503" }) };
  const clock = fixedClock(new Date());
  const deps = { db: t.db, mail: failing, clock, retrySeconds: [7, 11] };
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: false, retryInSeconds: 7 });
  expect(await row(id)).toMatchObject({ emailStatus: "PENDING", emailAttempts: 1, emailError: "HTTP 503" });
  // A duplicate message before the retry is due waits for it; nothing is sent.
  clock.advance(2_000);
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: false, retryInSeconds: 5 });
  expect(calls).toBe(1);
  clock.advance(5_000);
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: false, retryInSeconds: 11 });
  clock.advance(11_000);
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "FAILED", emailAttempts: 3, emailError: "HTTP 503" });
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(calls).toBe(3);
});

test("an attempt holds its lease: a duplicate waits, and an attempt whose worker died counts once the lease is over", async () => {
  const { id } = await notification();
  const clock = fixedClock(new Date());
  let release!: () => void;
  let calls = 0;
  const hanging: MailProvider = {
    send: async () => {
      calls++;
      await new Promise<void>((r) => (release = r));
      return { ok: true, id: "m" };
    },
  };
  const deps = { db: t.db, mail: hanging, clock };
  const first = sendNotificationEmail(deps, id);
  await Bun.sleep(20);
  expect(calls).toBe(1);
  // A duplicate while the first attempt is out: it waits for the lease, nothing is sent twice at once.
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: false, retryInSeconds: EMAIL_LEASE_MS / 1000 });
  expect(calls).toBe(1);
  // Its worker "died" (never answers): after the lease the next attempt goes.
  clock.advance(EMAIL_LEASE_MS);
  const mail = databaseMailbox(t.db);
  expect(await sendNotificationEmail({ ...deps, mail }, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailAttempts: 2, emailNextAttemptAt: null });
  release();
  await first;
});

test("the HTTP provider posts { from, to, subject, text } with the key and an idempotency key per notification", async () => {
  const seen: { url: string; init: RequestInit }[] = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push({ url, init });
    return Response.json({ id: "msg_1" });
  };
  const provider = httpMailProvider({ url: "https://mail.example/emails", apiKey: "re_key", from: "svc <n@svc.example>", fetch });
  const result = await provider.send({ to: "o@m.example", subject: "S", text: "T", notificationId: "n1" }, new Date());
  expect(result).toEqual({ ok: true, id: "msg_1" });
  expect(seen[0]!.url).toBe("https://mail.example/emails");
  expect(seen[0]!.init.headers).toMatchObject({ authorization: "Bearer re_key", "idempotency-key": "notification-n1" });
  expect(JSON.parse(String(seen[0]!.init.body))).toEqual({ from: "svc <n@svc.example>", to: "o@m.example", subject: "S", text: "T" });
  const down = httpMailProvider({
    url: "https://mail.example/emails",
    apiKey: "k",
    from: "f@x.example",
    fetch: async () => new Response("no", { status: 500 }),
  });
  expect(await down.send({ to: "o@m.example", subject: "S", text: "T", notificationId: "n2" }, new Date())).toEqual({ ok: false, error: "HTTP 500" });
});

test("nothing is sent to an owner whose address is not verified: SKIPPED with the reason; sent once verified", async () => {
  const unverified = await signUpTenant(t, "Acme", { verifyEmail: false });
  const { id } = await notification(unverified);
  let sends = 0;
  const counting: MailProvider = { send: async (m, now) => (sends++, databaseMailbox(t.db).send(m, now)) };
  const deps = { db: t.db, mail: counting, clock: t.clock };
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(sends).toBe(0);
  expect(await row(id)).toMatchObject({ emailStatus: "SKIPPED", emailError: "owner e-mail not verified", emailAttempts: 0 });
  expect(await t.db.select().from(mailbox).where(eq(mailbox.notificationId, id))).toEqual([]);

  // Verified through the link: the next notification goes out; the skipped one stays skipped.
  const token = await verificationTokenFor(t, unverified.email);
  expect((await t.request("POST", "/v1/auth/verify-email", { body: { token } })).status).toBe(200);
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "SKIPPED" });
  const { id: later } = await notification(unverified);
  expect(await sendNotificationEmail(deps, later)).toEqual({ ack: true });
  expect(sends).toBe(1);
  expect(await row(later)).toMatchObject({ emailStatus: "SENT", emailAttempts: 1 });
});

test("an owner demoted to MEMBER before the e-mail is sent gets nothing: SKIPPED, the recipient is no longer an owner (an audit had a locked-out owner still receive the tenant's loan e-mails)", async () => {
  const owner = await signUpTenant(t);
  const { id } = await notification(owner);
  await t.db.update(users).set({ role: "MEMBER" }).where(eq(users.email, owner.email.toLowerCase()));
  expect(await sendNotificationEmail({ db: t.db, mail: databaseMailbox(t.db), clock: t.clock }, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "SKIPPED", emailError: "recipient is no longer an owner", emailAttempts: 0 });
  expect(await t.db.select().from(mailbox).where(eq(mailbox.notificationId, id))).toEqual([]);
});

test("the addressed owner demoted before sending while another verified OWNER remains: the e-mail goes to that owner, not lost (review)", async () => {
  const { id, second, demoteFirst } = await twoVerifiedOwners();
  await demoteFirst();
  expect(await sendNotificationEmail({ db: t.db, mail: databaseMailbox(t.db), clock: t.clock }, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailTo: second.email.toLowerCase(), emailAttempts: 1 });
  expect((await t.db.select().from(mailbox).where(eq(mailbox.notificationId, id))).map((m) => m.toAddress)).toEqual([second.email.toLowerCase()]);
});

test("an address verified by a user of another tenant does not let this tenant's e-mail through", async () => {
  const a = await signUpTenant(t); // verified
  const b = await signUpTenant(t, "Acme", { verifyEmail: false });
  // A notification of tenant b addressed (however it came about) to tenant a's verified owner.
  const { id } = await notification(b, a.email);
  expect(await sendNotificationEmail({ db: t.db, mail: databaseMailbox(t.db), clock: t.clock }, id)).toEqual({ ack: true });
  expect(await row(id)).toMatchObject({ emailStatus: "SKIPPED", emailError: "owner e-mail not verified" });
});

describe("D1 overloaded during an e-mail's bookkeeping spends no attempt and sends nothing twice", () => {
  const overloadedDb = (policy: Omit<D1FaultPolicy, "rate">) => createDb(overloadedLibsql(t.client, { rate: 1, ...policy }));
  const mailsOf = async (id: string) => t.db.select().from(mailbox).where(eq(mailbox.notificationId, id));

  test("the record of a sent e-mail, overloaded twice, is retried in place: SENT once, attempt 1", async () => {
    const { id } = await notification();
    const db = overloadedDb({ when: "before", match: '^update "notifications" set "email_status"', limit: 2 });
    const deps = { db, mail: databaseMailbox(t.db), clock: t.clock };
    expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
    expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailAttempts: 1, emailNextAttemptAt: null });
    expect(await mailsOf(id)).toHaveLength(1);
  });

  test("a claim that committed with its answer lost is recognized as this call's: sent, attempt 1", async () => {
    const { id } = await notification();
    const db = overloadedDb({ when: "after", match: '^update "notifications" set "email_to"', limit: 1 });
    const deps = { db, mail: databaseMailbox(t.db), clock: t.clock };
    expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
    expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailAttempts: 1 });
    expect(await mailsOf(id)).toHaveLength(1);
  });

  test("a claim that never ran throws (the Queue retries the message) and spends nothing; the retry sends it", async () => {
    const { id } = await notification();
    const db = overloadedDb({ when: "before", match: '^update "notifications" set "email_to"', limit: 1 });
    const deps = { db, mail: databaseMailbox(t.db), clock: t.clock };
    const first = await sendNotificationEmail(deps, id).catch((err: unknown) => err);
    expect(isTransientError(first)).toBe(true);
    expect(await row(id)).toMatchObject({ emailStatus: "PENDING", emailAttempts: 0 });
    expect(await mailsOf(id)).toHaveLength(0);
    expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
    expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailAttempts: 1 });
    expect(await mailsOf(id)).toHaveLength(1);
  });
});

/** A tenant with two verified OWNERs (first, second) and a PENDING notification addressed to the first. */
async function twoVerifiedOwners() {
  const first = await signUpTenant(t);
  const second = await addUserWithRole(t, first.token, "OWNER");
  expect((await t.request("POST", "/v1/auth/resend-verification", { headers: bearer(second.token) })).status).toBe(202);
  expect((await t.request("POST", "/v1/auth/verify-email", { body: { token: await verificationTokenFor(t, second.email) } })).status).toBe(200);
  const { id } = await notification(first, first.email.toLowerCase());
  const demoteFirst = () => t.db.update(users).set({ role: "MEMBER" }).where(eq(users.email, first.email.toLowerCase()));
  return { id, first, second, demoteFirst };
}

test("a duplicate message while an attempt to the addressed owner is in flight, that owner demoted meanwhile: the row names whom the e-mail went to (it said SENT to the other owner, who got nothing: review)", async () => {
  const { id, first, second, demoteFirst } = await twoVerifiedOwners();
  const box = databaseMailbox(t.db);
  let duplicate: unknown;
  // The first attempt (to the first owner, still an OWNER when it was judged) is in flight; meanwhile the first owner is demoted
  // and the Queue's duplicate message for the same notification runs.
  const slow: MailProvider = {
    async send(m, now) {
      if (!duplicate) {
        await demoteFirst();
        duplicate = await sendNotificationEmail({ db: t.db, mail: box, clock: t.clock }, id);
      }
      return box.send(m, now);
    },
  };
  expect(await sendNotificationEmail({ db: t.db, mail: slow, clock: t.clock }, id)).toEqual({ ack: true });
  expect(duplicate).toMatchObject({ ack: false });
  const sentTo = (await t.db.select().from(mailbox).where(eq(mailbox.notificationId, id))).map((m) => m.toAddress);
  expect(sentTo).toEqual([first.email.toLowerCase()]);
  // The view (API `email.to`, the dashboard) names where it went.
  expect(await row(id)).toMatchObject({ emailStatus: "SENT", emailTo: first.email.toLowerCase() });
  void second;
});

test("a retry re-addressed to another owner goes under another idempotency key than the attempt to the demoted owner (the provider answered the first request, or refused the changed payload: review)", async () => {
  const { id, first, second, demoteFirst } = await twoVerifiedOwners();
  const seen: { to: string; key: string }[] = [];
  let calls = 0;
  const fetch: FetchLike = async (_url, init) => {
    const body = JSON.parse(String(init!.body)) as { to: string };
    seen.push({ to: body.to, key: (init!.headers as Record<string, string>)["idempotency-key"]! });
    // The first request times out at the client (the provider may well have accepted it).
    return calls++ === 0 ? new Response("gateway timeout", { status: 504 }) : Response.json({ id: "msg" });
  };
  const mail = httpMailProvider({ url: "https://mail.example/emails", apiKey: "k", from: "svc <n@svc.example>", fetch });
  const deps = { db: t.db, mail, clock: t.clock, retrySeconds: [0, 0] };
  expect(await sendNotificationEmail(deps, id)).toMatchObject({ ack: false });
  await demoteFirst();
  expect(await sendNotificationEmail(deps, id)).toEqual({ ack: true });
  expect(seen.map((s) => s.to)).toEqual([first.email.toLowerCase(), second.email.toLowerCase()]);
  expect(seen[1]!.key).not.toBe(seen[0]!.key);
});
