import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";
import { repayInSandbox } from "../../../../shared/testing/sandbox-repayment.ts";

/**
 * GET /v1/stats/today, the dashboard Home's numbers: counted from the
 * tenant's own loans of one mode, on that mode's clock, and nobody else's.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const stats = (headers: Record<string, string>, query = "") => t.request("GET", `/v1/stats/today${query}`, { headers });
const policy = (key: string, p: Record<string, unknown>) =>
  t.request("PUT", "/v1/policies", {
    body: { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [], ...p },
    headers: apiKey(key),
  });
const ZERO = { created: 0, funded: 0, repaid: 0, overdue: 0, defaulted: 0, declined: 0, awaitingReview: 0 };
/** The sum of 2-decimal amounts ("102.00"), as the API writes a whole number of cents (2 decimals). */
const sum = (...amounts: string[]) => {
  const cents = amounts.reduce((s, a) => s + BigInt(a.replace(".", "")), 0n);
  return `${cents / 100n}.${String(cents % 100n).padStart(2, "0")}`;
};

describe("GET /v1/stats/today", () => {
  test("today's loans of the mode: created, funded, declined, awaiting review, lent and outstanding; a moved sandbox clock is a new day", async () => {
    const m = await sandboxTenant(t, "Stats Co");
    const a = await createdLoan(t, m.key, { principalAmount: "100.00" });
    const b = await createdLoan(t, m.key, { principalAmount: "250.50" });
    expect((await policy(m.key, { manualReviewAbove: "500.00" })).status).toBe(200);
    const review = await createdLoan(t, m.key, { principalAmount: "600.00" });
    expect(review.decision.outcome).toBe("MANUAL_REVIEW");
    expect((await policy(m.key, { requireKycVerified: true })).status).toBe(200);
    const declined = await createdLoan(t, m.key);
    expect(declined.derivedStatus).toBe("DECLINED");

    const res = await stats(apiKey(m.key));
    expect(res.status).toBe(200);
    const day = new Date(t.clock.now().toISOString().slice(0, 10));
    expect(res.body).toEqual({
      mode: "sandbox",
      from: day.toISOString(),
      to: new Date(day.getTime() + 86_400_000).toISOString(),
      ...ZERO,
      created: 4,
      funded: 2,
      declined: 1,
      awaitingReview: 1,
      // Outstanding: what the two ACTIVE loans owe (principal and processing fee), to the base unit.
      amounts: [{ stablecoin: a.stablecoin, lent: "350.50", outstanding: sum(a.totalDue, b.totalDue) }],
    });
    // The owner's session reads the tenant's mode by default, and the same numbers; a MEMBER may read them too.
    expect((await stats(bearer(m.token))).body).toEqual(res.body);
    expect((await stats(bearer(m.token), "?mode=sandbox")).body).toEqual(res.body);
    const member = await addUserWithRole(t, m.token, "MEMBER");
    expect((await stats(bearer(member.token))).body).toEqual(res.body);
    // Live has nothing yet.
    expect((await stats(bearer(m.token), "?mode=live")).body).toMatchObject({ mode: "live", ...ZERO, amounts: [] });

    // A second after the funded loans' grace period ends on the sandbox clock (a later day): they went overdue and defaulted today.
    const defaultsAt = Date.parse(a.dueAt) + a.gracePeriodDays * 86_400_000;
    const seconds = Math.ceil((defaultsAt - t.clock.now().getTime()) / 1000) + 1;
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(m.key) })).status).toBe(200);
    const later = await stats(apiKey(m.key));
    expect(later.body).toMatchObject({
      ...ZERO,
      overdue: 2,
      defaulted: 2,
      awaitingReview: 1,
      amounts: [{ stablecoin: a.stablecoin, lent: "0.00", outstanding: "0.00" }],
    });
    expect(later.body.from).toBe(`${new Date(defaultsAt).toISOString().slice(0, 10)}T00:00:00.000Z`);
    expect(Date.parse(later.body.from)).toBeGreaterThan(Date.parse(res.body.from));

    // A quiet day after: nothing happened, the review still waits, and the stablecoin the mode has loans of is still listed.
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: apiKey(m.key) })).status).toBe(200);
    const quiet = await stats(apiKey(m.key));
    expect(quiet.body).toMatchObject({
      ...ZERO,
      awaitingReview: 1,
      amounts: [{ stablecoin: a.stablecoin, lent: "0.00", outstanding: "0.00" }],
    });
    expect(Date.parse(quiet.body.from)).toBe(Date.parse(later.body.from) + 86_400_000);
  });

  test("a default recorded days after its terms' moment (the README's two clock advances) counts on the day loan.defaulted fired; a reviewer's REJECT on a later day counts as declined that day", async () => {
    const m = await sandboxTenant(t, "Late Default Co");
    expect((await policy(m.key, { manualReviewAbove: "500.00" })).status).toBe(200);
    const loan = await createdLoan(t, m.key, { principalAmount: "100.00", tenureDays: 7 });
    const review = await createdLoan(t, m.key, { principalAmount: "600.00" });
    expect(review.decision.outcome).toBe("MANUAL_REVIEW");
    const advance = async (seconds: number) =>
      expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds }, headers: apiKey(m.key) })).status).toBe(200);
    await advance(8 * 86_400);
    expect((await stats(apiKey(m.key))).body).toMatchObject({ ...ZERO, overdue: 1, awaitingReview: 1 });
    await advance(4 * 86_400);
    const defaulted = (await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body;
    expect(defaulted.status).toBe("DEFAULTED");
    // The terms put the default two days back; it was recorded (and loan.defaulted fired) today.
    const events = (await t.request("GET", `/v1/events?loanId=${loan.id}&type=loan.defaulted`, { headers: apiKey(m.key) })).body.data;
    expect(events).toHaveLength(1);
    const today = await stats(apiKey(m.key));
    expect(Date.parse(defaulted.defaultedAt)).toBeLessThan(Date.parse(today.body.from));
    expect(Date.parse(events[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(today.body.from));
    expect(today.body).toMatchObject({ ...ZERO, defaulted: 1, awaitingReview: 1 });

    // The loan in review, rejected 12 days after it was decided: declined today.
    const rejected = await t.request("POST", `/v1/loans/${review.id}/review`, { body: { action: "REJECT", note: "no" }, headers: bearer(m.token) });
    expect(rejected.status).toBe(200);
    expect((await stats(apiKey(m.key))).body).toMatchObject({ ...ZERO, defaulted: 1, declined: 1 });
  });

  test("repaid today counts on the day of the repayment; what is still owed is outstanding until then", async () => {
    const m = await sandboxTenant(t, "Repaid Co");
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { principalAmount: "40.00", borrowerWalletAddress: borrower.address });
    const before = await stats(apiKey(m.key));
    expect(before.body).toMatchObject({
      created: 1,
      funded: 1,
      repaid: 0,
      amounts: [{ stablecoin: loan.stablecoin, lent: "40.00", outstanding: sum(loan.totalDue) }],
    });
    await repayInSandbox(t, m.key, borrower, loan.id);
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body.status).toBe("REPAID");
    const after = await stats(apiKey(m.key));
    expect(after.body).toMatchObject({
      created: 1,
      funded: 1,
      repaid: 1,
      amounts: [{ stablecoin: loan.stablecoin, lent: "40.00", outstanding: "0.00" }],
    });
  });

  test("tenant isolation: another tenant's loans count for nothing; a sandbox key asking for live: 403; a bad mode: 400", async () => {
    const m = await sandboxTenant(t, "Busy Co");
    await createdLoan(t, m.key);
    const other = await sandboxTenant(t, "Quiet Co");
    for (const headers of [apiKey(other.key), bearer(other.token)]) {
      const res = await stats(headers);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ mode: "sandbox", ...ZERO, amounts: [] });
    }
    const live = await stats(apiKey(m.key), "?mode=live");
    expect(live.status).toBe(403);
    expect(live.body).toMatchObject({ statusCode: 403, error: "Forbidden" });
    const bad = await stats(bearer(m.token), "?mode=production");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: "Bad Request", message: [expect.stringMatching(/^mode: /)] });
    expect((await stats({})).status).toBe(401);
  });
});
