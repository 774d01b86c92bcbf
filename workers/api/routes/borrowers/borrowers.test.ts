import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { borrowerKycAudit, borrowers } from "../../../../db/schema/borrowers.ts";
import { bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const patch = (key: string, idOrRef: string, body: unknown) =>
  t.request("PATCH", `/v1/borrowers/${encodeURIComponent(idOrRef)}/kyc`, { body, headers: apiKey(key) });
/** Moves the tenant's sandbox clock, not the system clock: sessions are checked against real time. */
const tick = (key: string, seconds = 1) => t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(key) });
const get = (key: string, idOrRef: string) => t.request("GET", `/v1/borrowers/${encodeURIComponent(idOrRef)}`, { headers: apiKey(key) });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

describe("borrowers: happy path", () => {
  test("PATCH on a new ref creates the borrower, stamps verifiedAt and writes the first audit row", async () => {
    const m = await sandboxTenant(t);
    const res = await patch(m.key, "user-42", { status: "VERIFIED", merchantUserId: "kyc-ops-7" });
    expect(res.status).toBe(200);
    const now = t.clock.now().toISOString();
    expect(res.body).toEqual({
      id: expect.any(String),
      borrowerRef: "user-42",
      // SPEC.md's Borrower table: KYC `status`, `verifiedAt`, `merchantUserId`; grouped again under `kyc`.
      status: "VERIFIED",
      verifiedAt: now,
      merchantUserId: "kyc-ops-7",
      kyc: { status: "VERIFIED", verifiedAt: now, merchantUserId: "kyc-ops-7" },
      kycAudit: [
        { id: expect.any(String), fromStatus: "PENDING", toStatus: "VERIFIED", merchantUserId: "kyc-ops-7", actor: `apiKey:${m.keyId}`, createdAt: now },
      ],
      createdAt: now,
      updatedAt: now,
    });
    const byRef = await get(m.key, "user-42");
    expect(byRef.status).toBe(200);
    expect(byRef.body).toEqual(res.body);
    const byId = await get(m.key, res.body.id);
    expect(byId.body).toEqual(res.body);
  });

  test("the audit trail grows with every PATCH (by ref or by id), oldest first, and verifiedAt follows each one", async () => {
    const m = await sandboxTenant(t);
    const first = await patch(m.key, "trail", { status: "PENDING", merchantUserId: "a" });
    await tick(m.key);
    await patch(m.key, first.body.id, { status: "FAILED", merchantUserId: "b" });
    await tick(m.key);
    const third = await patch(m.key, "trail", { status: "VERIFIED", merchantUserId: "c" });
    await tick(m.key);
    // The same status again is still recorded and stamped.
    const fourth = await patch(m.key, "trail", { status: "VERIFIED", merchantUserId: "d" });
    expect(fourth.body.kyc).toEqual({ status: "VERIFIED", verifiedAt: new Date(t.clock.now().getTime() + 3000).toISOString(), merchantUserId: "d" });
    expect(fourth.body.kyc.verifiedAt).not.toBe(third.body.kyc.verifiedAt);
    expect(fourth.body.kycAudit.map((a: any) => [a.fromStatus, a.toStatus, a.merchantUserId])).toEqual([
      ["PENDING", "PENDING", "a"],
      ["PENDING", "FAILED", "b"],
      ["FAILED", "VERIFIED", "c"],
      ["VERIFIED", "VERIFIED", "d"],
    ]);
    expect((await get(m.key, "trail")).body.kycAudit).toHaveLength(4);
  });

  test("a borrower created by a loan is found by its ref and by the loan's borrowerId, PENDING and unverified", async () => {
    const m = await sandboxTenant(t);
    const loan = await createdLoan(t, m.key, { borrowerRef: "from-a-loan" });
    const byId = await get(m.key, loan.borrowerId);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({
      id: loan.borrowerId,
      borrowerRef: "from-a-loan",
      kyc: { status: "PENDING", verifiedAt: null, merchantUserId: null },
      kycAudit: [],
    });
    const patched = await patch(m.key, loan.borrowerId, { status: "VERIFIED", merchantUserId: "ops" });
    expect(patched.body).toMatchObject({ id: loan.borrowerId, borrowerRef: "from-a-loan", kyc: { status: "VERIFIED" } });
    // And the next loan of that ref is the same borrower.
    expect((await createdLoan(t, m.key, { borrowerRef: "from-a-loan" })).borrowerId).toBe(loan.borrowerId);
  });

  test("the KYC stamp is on the tenant's sandbox clock", async () => {
    const m = await sandboxTenant(t);
    expect((await tick(m.key, 86_400)).status).toBe(200);
    const res = await patch(m.key, "later", { status: "VERIFIED", merchantUserId: "ops" });
    expect(res.body.kyc.verifiedAt).toBe(new Date(t.clock.now().getTime() + 86_400_000).toISOString());
    expect(res.body.kycAudit[0].createdAt).toBe(res.body.kyc.verifiedAt);
  });

  test("refs with spaces, slashes, punctuation and unicode round-trip URL-encoded; a UUID-shaped ref works as a ref", async () => {
    const m = await sandboxTenant(t);
    for (const ref of ["user 42", "tenant/a/user-1", "ref:a@b.c?x=1#y%20", "usuário-ñ", crypto.randomUUID()]) {
      const res = await patch(m.key, ref, { status: "VERIFIED", merchantUserId: "ops" });
      expect(res.status).toBe(200);
      expect(res.body.borrowerRef).toBe(ref);
      expect((await get(m.key, ref)).body.id).toBe(res.body.id);
    }
  });

  test("a ref in the path is trimmed as a body's borrowerRef is: ' bob ' is bob, whose loans and list filter find the same borrower", async () => {
    const m = await sandboxTenant(t);
    const spaced = await patch(m.key, " bob ", { status: "VERIFIED", merchantUserId: "ops" });
    expect(spaced.status).toBe(200);
    expect(spaced.body.borrowerRef).toBe("bob");
    const loan = await createdLoan(t, m.key, { borrowerRef: " bob " });
    expect(loan.borrowerId).toBe(spaced.body.id);
    expect((await get(m.key, "bob")).body.id).toBe(spaced.body.id);
    const listed = await t.request("GET", `/v1/loans?borrowerRef=${encodeURIComponent(" bob ")}`, { headers: apiKey(m.key) });
    expect(listed.body.data.map((l: { id: string }) => l.id)).toEqual([loan.id]);
  });

  test("concurrent PATCHes of one borrower each get their own audit row, chained without gaps", async () => {
    const m = await sandboxTenant(t);
    await patch(m.key, "busy", { status: "PENDING", merchantUserId: "seed" });
    const statuses = ["VERIFIED", "FAILED", "PENDING", "VERIFIED", "FAILED", "VERIFIED", "PENDING", "FAILED"] as const;
    const results = await Promise.all(statuses.map((status, i) => patch(m.key, "busy", { status, merchantUserId: `p${i}` })));
    expect(results.map((r) => r.status)).toEqual(statuses.map(() => 200));
    const trail = (await get(m.key, "busy")).body.kycAudit as { fromStatus: string; toStatus: string }[];
    expect(trail).toHaveLength(statuses.length + 1);
    // Each row's from is the previous row's to: no update was lost.
    for (let i = 1; i < trail.length; i++) expect(trail[i]!.fromStatus).toBe(trail[i - 1]!.toStatus);
    expect((await get(m.key, "busy")).body.kyc.status).toBe(trail.at(-1)!.toStatus);
  });
});

/** The messages of the error a query throws, its causes included (drizzle wraps the driver's error). */
async function failureOf(query: () => PromiseLike<unknown>): Promise<string> {
  try {
    await query();
  } catch (err) {
    const messages: string[] = [];
    for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) messages.push(e instanceof Error ? e.message : String(e));
    return messages.join(" | ");
  }
  return "no error";
}

describe("borrowers: the audit trail is immutable", () => {
  test("UPDATE and DELETE on the audit table are refused by the database", async () => {
    const m = await sandboxTenant(t);
    const res = await patch(m.key, "immutable", { status: "VERIFIED", merchantUserId: "ops" });
    const auditId = res.body.kycAudit[0].id as string;
    for (const attempt of [
      () => t.db.run(sql`UPDATE borrower_kyc_audit SET to_status = 'FAILED' WHERE id = ${auditId}`),
      () => t.db.run(sql`DELETE FROM borrower_kyc_audit WHERE id = ${auditId}`),
      () => t.db.update(borrowerKycAudit).set({ actor: "someone else" }).where(eq(borrowerKycAudit.id, auditId)),
      () => t.db.delete(borrowerKycAudit).where(eq(borrowerKycAudit.borrowerId, res.body.id)),
    ]) {
      expect(await failureOf(attempt)).toContain("borrower_kyc_audit is immutable");
    }
    const [row] = await t.db.select().from(borrowerKycAudit).where(eq(borrowerKycAudit.id, auditId));
    expect(row).toMatchObject({ toStatus: "VERIFIED", actor: `apiKey:${m.keyId}` });
  });
});

describe("borrowers: errors", () => {
  let key: string;
  beforeAll(async () => {
    key = (await sandboxTenant(t)).key;
  });

  test("every missing field is named", async () => {
    const res = await patch(key, "x", {});
    expectFieldErrors(res, "status", "merchantUserId");
    expect(res.body.message).toHaveLength(2);
  });

  test.each([
    ["an unknown status", { status: "APPROVED", merchantUserId: "ops" }, "status"],
    ["a lowercase status", { status: "verified", merchantUserId: "ops" }, "status"],
    ["a null status", { status: null, merchantUserId: "ops" }, "status"],
    ["an empty merchantUserId", { status: "VERIFIED", merchantUserId: "" }, "merchantUserId"],
    ["a blank merchantUserId", { status: "VERIFIED", merchantUserId: "   " }, "merchantUserId"],
    ["a numeric merchantUserId", { status: "VERIFIED", merchantUserId: 7 }, "merchantUserId"],
    ["a merchantUserId of 256 characters", { status: "VERIFIED", merchantUserId: "m".repeat(256) }, "merchantUserId"],
  ])("%s", async (_name, body, field) => {
    const res = await patch(key, "bad-input", body);
    expectFieldErrors(res, field);
    expect(res.body.message).toHaveLength(1);
  });

  test("a failed PATCH creates no borrower and no audit row", async () => {
    await patch(key, "never-created", { status: "MAYBE", merchantUserId: "ops" });
    expect((await get(key, "never-created")).status).toBe(404);
    expect(await t.db.select().from(borrowers).where(eq(borrowers.borrowerRef, "never-created"))).toEqual([]);
  });

  test("a ref of 256 characters: 400 naming id", async () => {
    const res = await patch(key, "r".repeat(256), { status: "VERIFIED", merchantUserId: "ops" });
    expectFieldErrors(res, "id");
  });

  test("GET of an unknown borrower: 404", async () => {
    const res = await get(key, "nobody");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "Borrower not found", error: "Not Found" });
    expect((await get(key, crypto.randomUUID())).status).toBe(404);
  });
});

describe("borrowers: security", () => {
  test("no credentials: 401; a dashboard session is admitted (an unknown borrower: 404)", async () => {
    const m = await sandboxTenant(t);
    expect((await t.request("GET", "/v1/borrowers/x")).status).toBe(401);
    expect((await t.request("PATCH", "/v1/borrowers/x/kyc", { body: { status: "VERIFIED", merchantUserId: "ops" } })).status).toBe(401);
    expect((await t.request("GET", "/v1/borrowers/x", { headers: bearer(m.token) })).status).toBe(404);
  });

  test("another tenant's borrower: 404 by id and by ref; a PATCH with its id never touches it", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    const theirs = await patch(a.key, "shared-ref", { status: "VERIFIED", merchantUserId: "a-ops" });
    expect((await get(b.key, theirs.body.id)).status).toBe(404);
    expect((await get(b.key, "shared-ref")).status).toBe(404);

    // b's PATCH with a's borrower id is b's own new borrower with that ref.
    const mine = await patch(b.key, theirs.body.id, { status: "FAILED", merchantUserId: "b-ops" });
    expect(mine.status).toBe(200);
    expect(mine.body.id).not.toBe(theirs.body.id);
    expect(mine.body.borrowerRef).toBe(theirs.body.id);
    const aStill = await get(a.key, theirs.body.id);
    expect(aStill.body.kyc).toMatchObject({ status: "VERIFIED", merchantUserId: "a-ops" });
    expect(aStill.body.kycAudit).toHaveLength(1);

    // The same ref in two tenants is two borrowers.
    const bShared = await patch(b.key, "shared-ref", { status: "PENDING", merchantUserId: "b-ops" });
    expect(bShared.body.id).not.toBe(theirs.body.id);
    expect((await get(a.key, "shared-ref")).body.kyc.status).toBe("VERIFIED");
  });
});

describe("borrowers: robustness", () => {
  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
