import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../../../db/create-db.ts";
import type { SessionStart } from "../../../../db/read-session.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

const BOOKMARK = "0000000b-00000005-00004f6e-9f1c2b3a";
let t: TestApp;
const starts: SessionStart[] = [];
beforeAll(async () => {
  t = await createTestApp();
  t.deps.readSessions = (start) => (starts.push(start), { db: t.db as Db, bookmark: () => BOOKMARK });
});
afterAll(() => t.close());

describe("GET /v1/loans/{id}: polling on read replicas, never older than the last answer", () => {
  test("the first read goes to the primary (the loan just created is there); the answer carries its bookmark", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    starts.length = 0;
    const first = await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) });
    expect(first.status).toBe(200);
    expect(first.body.id).toBe(loan.id);
    expect(first.body.status).toBe(loan.status);
    expect(first.headers.get("x-d1-bookmark")).toBe(BOOKMARK);
    expect(starts).toEqual(["first-primary"]);
  });

  test("a poll that sends the bookmark back reads a replica at least that fresh; a malformed one reads the primary", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key);
    starts.length = 0;
    const poll = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { ...apiKey(m.key), "x-d1-bookmark": BOOKMARK } });
    expect(poll.status).toBe(200);
    const forged = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { ...apiKey(m.key), "x-d1-bookmark": "first-unconstrained" } });
    expect(forged.status).toBe(200);
    expect(starts).toEqual([{ bookmark: BOOKMARK }, "first-primary"]);
  });

  test("another tenant's loan is still 404 through a session", async () => {
    const a = await sandboxTenant(t, "A");
    const b = await sandboxTenant(t, "B");
    const loan = await createdLoan(t, a.key);
    const res = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { ...apiKey(b.key), "x-d1-bookmark": BOOKMARK } });
    expect(res.status).toBe(404);
    expect(res.body.statusCode).toBe(404);
  });
});
