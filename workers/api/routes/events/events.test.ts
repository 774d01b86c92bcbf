import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { events } from "../../../../db/schema/events.ts";
import { EVENT_TYPES } from "../../../../shared/domain/vocabularies.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const list = (key: string, query = "") => t.request("GET", `/v1/events${query}`, { headers: apiKey(key) });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("events: happy path", () => {
  test("a funded loan's events, newest first, each as its envelope", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    const res = await list(m.key, `?loanId=${loan.id}`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual(["loan.funded", "loan.decision", "loan.application_submitted"]);
    for (const e of res.body.data) {
      expect(Object.keys(e).sort()).toEqual(["channel", "createdAt", "data", "id", "mode", "program", "tenantId", "type"]);
      expect(e).toMatchObject({ tenantId: m.tenantId, program: null, channel: null });
      expect(e.data.loan.id).toBe(loan.id);
    }
    const [funded, decision, submitted] = res.body.data;
    expect(submitted.data.loan).toMatchObject({ status: "CREATED", decision: null });
    expect(decision.data.loan.decision.outcome).toBe("APPROVED");
    expect(funded.data.loan).toMatchObject({ status: "ACTIVE", fundingTxHash: loan.fundingTxHash });
    // The stored envelope, exactly.
    const [row] = await t.db.select().from(events).where(eq(events.id, funded.id));
    expect(row!.envelope).toEqual(funded);
  });

  test("GET /v1/events/{id} returns one envelope", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    const [latest] = (await list(m.key, `?loanId=${loan.id}&limit=1`)).body.data;
    const one = await t.request("GET", `/v1/events/${latest.id}`, { headers: apiKey(m.key) });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(latest);
    expect((await t.request("GET", `/v1/events/${latest.id}`, { headers: bearer(m.token) })).body).toEqual(latest);
  });

  test("filters: type, loanId, and both", async () => {
    const m = await sandboxTenant(t);
    const a = await createdLoan(t, m.key);
    const b = await createdLoan(t, m.key);
    const funded = (await list(m.key, "?type=loan.funded")).body.data;
    expect(funded.map((e: any) => e.data.loan.id)).toEqual([b.id, a.id]);
    const onlyA = (await list(m.key, `?loanId=${a.id}`)).body.data;
    expect(onlyA).toHaveLength(3);
    expect(onlyA.every((e: any) => e.data.loan.id === a.id)).toBe(true);
    const both = (await list(m.key, `?loanId=${a.id}&type=loan.decision`)).body.data;
    expect(both.map((e: any) => [e.type, e.data.loan.id])).toEqual([["loan.decision", a.id]]);
    expect((await list(m.key, "?type=webhook.delivery_failed")).body).toEqual({ data: [], nextCursor: null });
    // Without filters: the tenant's every event, newest first.
    const all = (await list(m.key, "?limit=100")).body.data;
    expect(all.map((e: any) => `${e.type}:${e.data.loan.id}`)).toEqual([
      `loan.funded:${b.id}`,
      `loan.decision:${b.id}`,
      `loan.application_submitted:${b.id}`,
      `loan.funded:${a.id}`,
      `loan.decision:${a.id}`,
      `loan.application_submitted:${a.id}`,
    ]);
  });

  test("pagination: limit and an opaque cursor walk every event once; new events do not shift later pages", async () => {
    const m = await sandboxTenant(t);
    for (let i = 0; i < 3; i++) await createdLoan(t, m.key); // 9 events
    const all = (await list(m.key, "?limit=100")).body.data.map((e: { id: string }) => e.id);
    expect(all).toHaveLength(9);
    expect((await list(m.key)).body.data).toHaveLength(9); // default limit 20

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(m.key, `?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.nextCursor;
      if (pages === 0) await createdLoan(t, m.key); // newer events arrive meanwhile: they go on top
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
  });

  test("a liquidity event (no loan) is listed with the tenant's events", async () => {
    const m = await sandboxTenant(t);
    await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: apiKey(m.key) });
    const loan = await createdLoan(t, m.key);
    const unavailable = (await list(m.key, "?type=liquidity.unavailable")).body.data;
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0].data).toMatchObject({ loan: { id: loan.id }, requested: "100.00" });
    const low = (await list(m.key, "?type=liquidity.low")).body.data;
    expect(low).toHaveLength(1);
    expect(low[0].data.loanId).toBeNull();
  });
});

describe("events: errors", () => {
  let key: string;
  beforeAll(async () => {
    key = (await sandboxTenant(t)).key;
  });

  test.each([
    ["an unknown type", "?type=loan.created", "type"],
    ["limit 0", "?limit=0", "limit"],
    ["limit 101", "?limit=101", "limit"],
    ["limit not a number", "?limit=ten", "limit"],
    ["a loanId that is no UUID", "?loanId=abc", "loanId"],
    ["a cursor this service never issued", "?cursor=not-a-cursor", "cursor"],
    ["a cursor of another list", `?cursor=${btoa("1700000000000|5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b")}`, "cursor"],
  ])("%s: 400 naming it", async (_name, query, field) => {
    const res = await list(key, query);
    expectFieldErrors(res, field);
    expect(res.body.message).toHaveLength(1);
  });

  test("every event type is accepted as a filter", async () => {
    for (const type of EVENT_TYPES) expect((await list(key, `?type=${type}`)).status).toBe(200);
  });

  test("a cursor is sealed: made up, edited, crafted the old way (seq:<n>), or another tenant's, it is 400 naming cursor; it never shows the platform-wide seq", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    await createdLoan(t, a.key);
    await createdLoan(t, b.key);
    const first = await list(b.key, "?limit=1");
    expect(first.status).toBe(200);
    const cursor: string = first.body.nextCursor;
    // Nothing in it reads as a number: an audit counted other tenants' events from two seq cursors' difference.
    expect(cursor).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const next = await list(b.key, `?limit=1&cursor=${cursor}`);
    expect(next.status).toBe(200);
    expect(next.body.data[0].id).not.toBe(first.body.data[0].id);
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`;
    for (const [key, bad] of [
      [a.key, cursor],
      [b.key, tampered],
      [b.key, btoa("seq:1")],
      [b.key, btoa(`seq:${Number.MAX_SAFE_INTEGER}`)],
      [b.key, `v1.${"A".repeat(16)}.${"A".repeat(40)}`],
    ] as const) {
      const res = await list(key, `?cursor=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
      expect(JSON.stringify(res.body.message)).toContain("cursor");
    }
  });

  test("a page goes on below its cursor's event even once retention removed that event", async () => {
    const m = await sandboxTenant(t);
    await createdLoan(t, m.key);
    const all = (await list(m.key, "?limit=100")).body.data.map((e: { id: string }) => e.id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const first = await list(m.key, "?limit=1");
    // Removed as retention removes a closed loan's history (its notifications and deliveries would go with it).
    await t.client.execute("PRAGMA foreign_keys = OFF");
    await t.db.delete(events).where(eq(events.id, first.body.data[0].id));
    await t.client.execute("PRAGMA foreign_keys = ON");
    const rest = await list(m.key, `?limit=100&cursor=${first.body.nextCursor}`);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(1));
  });

  test("GET of an unknown event or a non-UUID: 404", async () => {
    for (const id of [crypto.randomUUID(), "not-an-id"]) {
      const res = await t.request("GET", `/v1/events/${id}`, { headers: apiKey(key) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: "Event not found", error: "Not Found" });
    }
  });
});

describe("events: security", () => {
  test("no credentials: 401", async () => {
    expect((await t.request("GET", "/v1/events")).status).toBe(401);
    expect((await t.request("GET", `/v1/events/${crypto.randomUUID()}`)).status).toBe(401);
  });

  test("a MEMBER may read the events", async () => {
    const m = await sandboxTenant(t);
    await createdLoan(t, m.key);
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const res = await t.request("GET", "/v1/events", { headers: bearer(member.token) });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
  });

  test("tenants never see each other's events: not listed, not by loan, not by id", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const loan = await createdLoan(t, a.key);
    const [theirs] = (await list(a.key, `?loanId=${loan.id}`)).body.data;
    expect((await list(b.key)).body).toEqual({ data: [], nextCursor: null });
    expect((await list(b.key, `?loanId=${loan.id}`)).body).toEqual({ data: [], nextCursor: null });
    const byId = await t.request("GET", `/v1/events/${theirs.id}`, { headers: apiKey(b.key) });
    expect(byId.status).toBe(404);
    // A cursor sealed for a is refused to b (400), never read as a position in b's list.
    const aPage = await list(a.key, "?limit=1");
    const foreign = await list(b.key, `?cursor=${aPage.body.nextCursor}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
    expect(JSON.stringify(foreign.body.message)).toContain("cursor");
  });

  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
