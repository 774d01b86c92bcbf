import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, newWallet, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

/**
 * What the dashboard's loan, review, borrower and settlement pages read with
 * a session (issue 14): the loan list's `decision` (the review queue) and
 * `borrowerWalletAddress` filters, the loan, its settlements and deliveries,
 * and borrowers with their KYC (set by an Owner/Admin only); another
 * tenant's ids answer 404 as they do for keys.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const putPolicy = (key: string, policy: Record<string, unknown>) =>
  t.request("PUT", "/v1/policies", {
    headers: apiKey(key),
    body: { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [], ...policy },
  });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((l) => l.id);

describe("GET /v1/loans for the dashboard", () => {
  test("a session (a MEMBER too) lists loans; decision=MANUAL_REVIEW is the review queue, and a reviewed loan leaves it", async () => {
    const m = await sandboxTenant(t);
    const member = await addUserWithRole(t, m.token, "MEMBER");
    expect((await putPolicy(m.key, { manualReviewAbove: "50.00" })).status).toBe(200);
    const approved = await createdLoan(t, m.key, { principalAmount: "40.00" });
    t.clock.advance(1); // newest first needs distinct times on the still test clock
    const waiting = await createdLoan(t, m.key, { principalAmount: "75.00" });
    t.clock.advance(1);
    const rejected = await createdLoan(t, m.key, { principalAmount: "80.00" });
    expect(waiting.decision.outcome).toBe("MANUAL_REVIEW");

    const list = (q: string, token = m.token) => t.request("GET", `/v1/loans${q}`, { headers: bearer(token) });
    expect(ids(await list(""))).toEqual([rejected.id, waiting.id, approved.id]);
    expect(ids(await list("", member.token))).toEqual([rejected.id, waiting.id, approved.id]);
    expect(ids(await list("?decision=MANUAL_REVIEW"))).toEqual([rejected.id, waiting.id]);
    expect(ids(await list("?decision=APPROVED&mode=sandbox"))).toEqual([approved.id]);
    expect(ids(await list("?mode=live"))).toEqual([]);

    const review = await t.request("POST", `/v1/loans/${rejected.id}/review`, { headers: bearer(m.token), body: { action: "REJECT", note: "thin file" } });
    expect(review.status).toBe(200);
    expect(ids(await list("?decision=MANUAL_REVIEW"))).toEqual([waiting.id]);
    expect(ids(await list("?decision=DECLINED"))).toEqual([rejected.id]);
    expect(ids(await list("?status=DECLINED"))).toEqual([rejected.id]);
    // The same filter for keys.
    expect(ids(await t.request("GET", "/v1/loans?decision=MANUAL_REVIEW", { headers: apiKey(m.key) }))).toEqual([waiting.id]);

    const bad = await list("?decision=PENDING");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
    expect(bad.body.message.map((s: string) => s.split(":")[0])).toEqual(["decision"]);

    const other = await sandboxTenant(t);
    expect(ids(await list("?decision=MANUAL_REVIEW", other.token))).toEqual([]);
  });

  test("borrowerWalletAddress finds the wallet's loans in any case (EVM) and matches exactly otherwise", async () => {
    const m = await sandboxTenant(t);
    const wallet = newWallet();
    const mine = await createdLoan(t, m.key, { borrowerWalletAddress: wallet });
    await createdLoan(t, m.key);
    const list = (wallet: string) => t.request("GET", `/v1/loans?borrowerWalletAddress=${encodeURIComponent(wallet)}`, { headers: bearer(m.token) });
    expect(ids(await list(wallet))).toEqual([mine.id]);
    expect(ids(await list(wallet.toLowerCase()))).toEqual([mine.id]);
    expect(ids(await list(` ${wallet.toUpperCase().replace("0X", "0x")} `))).toEqual([mine.id]);
    expect(ids(await list("not-a-wallet"))).toEqual([]);
    expect((await list("x".repeat(129))).status).toBe(400);
    const other = await sandboxTenant(t);
    expect(ids(await t.request("GET", `/v1/loans?borrowerWalletAddress=${wallet}`, { headers: bearer(other.token) }))).toEqual([]);
  });
});

describe("a loan's page with a session", () => {
  test("the loan, its settlements and its webhook deliveries (loanId filter); another tenant's: 404 / nothing", async () => {
    const m = await sandboxTenant(t);
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const endpoint = await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/svc", events: ["*"] }, headers: apiKey(m.key) });
    expect(endpoint.status).toBe(201);
    const loan = await createdLoan(t, m.key);
    const otherLoan = await createdLoan(t, m.key);

    const got = await t.request("GET", `/v1/loans/${loan.id}`, { headers: bearer(member.token) });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: loan.id, status: "ACTIVE", agreement: null });
    const settlements = await t.request("GET", `/v1/settlements/${loan.id}`, { headers: bearer(member.token) });
    expect(settlements.status).toBe(200);
    expect(settlements.body.data).toEqual([expect.objectContaining({ kind: "FUNDING", amount: "100.00", txHash: loan.fundingTxHash })]);

    const events = (await t.request("GET", `/v1/events?loanId=${loan.id}&limit=100`, { headers: bearer(m.token) })).body.data as { id: string }[];
    const deliveries = await t.request("GET", `/v1/webhooks/deliveries?loanId=${loan.id}&limit=100`, { headers: bearer(member.token) });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.map((d: { eventId: string }) => d.eventId).sort()).toEqual(events.map((e) => e.id).sort());
    expect(deliveries.body.data.length).toBeGreaterThan(0);
    const all = await t.request("GET", "/v1/webhooks/deliveries?limit=100", { headers: bearer(m.token) });
    expect(all.body.data.length).toBeGreaterThan(deliveries.body.data.length); // the other loan's are left out
    expect(otherLoan.id).not.toBe(loan.id);
    expect((await t.request("GET", "/v1/webhooks/deliveries?loanId=nope", { headers: bearer(m.token) })).status).toBe(400);

    const other = await sandboxTenant(t);
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: bearer(other.token) })).status).toBe(404);
    const foreign = await t.request("GET", `/v1/settlements/${loan.id}`, { headers: bearer(other.token) });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ statusCode: 404, error: "Not Found" });
    expect((await t.request("GET", `/v1/webhooks/deliveries?loanId=${loan.id}`, { headers: bearer(other.token) })).body.data).toEqual([]);
  });
});

describe("borrowers with a session", () => {
  test("an Owner or Admin sets KYC (the audit names the user), a MEMBER reads it and gets 403 on the change", async () => {
    const m = await sandboxTenant(t);
    const admin = await addUserWithRole(t, m.token, "ADMIN");
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const loan = await createdLoan(t, m.key, { borrowerRef: "dash-borrower-1" });

    const set = await t.request("PATCH", "/v1/borrowers/dash-borrower-1/kyc", {
      headers: bearer(admin.token),
      body: { status: "VERIFIED", merchantUserId: "ops-1" },
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: loan.borrowerId, kyc: { status: "VERIFIED", merchantUserId: "ops-1" } });
    expect(set.body.kycAudit.at(-1)).toMatchObject({ toStatus: "VERIFIED", merchantUserId: "ops-1", actor: `user:${admin.id}` });

    const refused = await t.request("PATCH", "/v1/borrowers/dash-borrower-1/kyc", {
      headers: bearer(member.token),
      body: { status: "FAILED", merchantUserId: "x" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ statusCode: 403, error: "Forbidden" });
    const read = await t.request("GET", `/v1/borrowers/${loan.borrowerId}`, { headers: bearer(member.token) });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ kyc: { status: "VERIFIED" } });
    expect(read.body.kycAudit).toHaveLength(1);
    // API keys keep setting KYC as before.
    expect(
      (await t.request("PATCH", "/v1/borrowers/dash-borrower-1/kyc", { headers: apiKey(m.key), body: { status: "PENDING", merchantUserId: "backend" } }))
        .status,
    ).toBe(200);

    const other = await sandboxTenant(t);
    expect((await t.request("GET", `/v1/borrowers/${loan.borrowerId}`, { headers: bearer(other.token) })).status).toBe(404);
  });
});
