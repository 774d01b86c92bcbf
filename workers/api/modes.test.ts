import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { events } from "../../db/schema/events.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { loans } from "../../db/schema/loans.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { webhookDeliveries } from "../../db/schema/webhooks.ts";
import { creditLineFor } from "../../shared/embed/credit-lines.ts";
import { programContext } from "../../shared/embed/program-context.ts";
import { bearer } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { apiKey, createdLoan, createLoan, newWallet, sandboxTenant } from "../../shared/testing/loan-fixtures.ts";
import { pageThrough } from "../../shared/testing/page-through.ts";

/**
 * DECISIONS.md "Modes: sandbox and live side by side": keys carry a mode, a
 * request acts in its key's mode, everything a loan causes records the
 * loan's mode, a key sees only its own mode and a dashboard session both.
 * Certification itself is tested with the go-live flow; here a tenant is
 * certified by writing `certified_at`, as certification does.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const forbidden = (message: string | RegExp) => ({
  statusCode: 403,
  message: typeof message === "string" ? message : expect.stringMatching(message),
  error: "Forbidden",
});

const newKey = (token: string, body: Record<string, unknown>) => t.request("POST", "/v1/api-keys", { body, headers: bearer(token) });

async function certify(tenantId: string) {
  await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, tenantId));
}

/** Live lending as the safe defaults want it: a policy that requires KYC (set with the live key), and `ref` verified. */
async function requireKyc(liveKey: string, ref: string, over: Record<string, unknown> = {}) {
  const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [], ...over };
  expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(liveKey) })).status).toBe(200);
  const kyc = { status: "VERIFIED", merchantUserId: "compliance-1" };
  expect((await t.request("PATCH", `/v1/borrowers/${encodeURIComponent(ref)}/kyc`, { body: kyc, headers: apiKey(liveKey) })).status).toBe(200);
}

let borrowers = 0;

/**
 * A certified tenant with a sandbox key (and a funded sandbox loan) and a
 * live key with a live loan, approved under a KYC policy for a verified
 * borrower (`liveBorrower`), waiting for liquidity.
 */
async function tenantOfBothModes() {
  const m = await sandboxTenant(t);
  const sandboxLoan = await createdLoan(t, m.key);
  await certify(m.tenantId);
  const created = await newKey(m.token, { name: "live backend", mode: "live" });
  expect(created.status).toBe(201);
  const liveKey = created.body.key as string;
  const liveBorrower = `live-borrower-${++borrowers}`;
  await requireKyc(liveKey, liveBorrower);
  const poolsBefore = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
  const live = await createLoan(t, liveKey, { chain: "POLYGON", borrowerRef: liveBorrower });
  expect(live.status).toBe(201);
  return { ...m, liveKey, liveBorrower, sandboxLoan, liveLoan: live.body, poolsBefore };
}

const typesOf = (page: { data: { type: string }[] }) => page.data.map((e) => e.type);

describe("API keys carry a mode", () => {
  test("sandbox by default and by name (svc_test_…), listed with their mode; live before certification: 403 and no key", async () => {
    const m = await sandboxTenant(t);
    const byDefault = await newKey(m.token, { name: "default" });
    expect(byDefault.status).toBe(201);
    expect(byDefault.body).toMatchObject({ mode: "sandbox", key: expect.stringMatching(/^svc_test_[A-Za-z0-9]{32}$/) });
    const named = await newKey(m.token, { name: "named", mode: "sandbox" });
    expect(named.body).toMatchObject({ mode: "sandbox", key: expect.stringMatching(/^svc_test_/) });

    const live = await newKey(m.token, { name: "too early", mode: "live" });
    expect(live.status).toBe(403);
    expect(live.body).toEqual(forbidden(/^Live API keys are issued after go-live certification/));
    const rows = await t.db.select().from(apiKeys).where(eq(apiKeys.tenantId, m.tenantId));
    expect(rows.map((r) => r.mode).sort()).toEqual(["sandbox", "sandbox", "sandbox"]);

    expect((await newKey(m.token, { name: "x", mode: "production" })).status).toBe(400);

    const list = await t.request("GET", "/v1/api-keys", { headers: bearer(m.token) });
    expect(list.body.data.map((k: { mode: string }) => k.mode)).toEqual(["sandbox", "sandbox", "sandbox"]);
    const me = await t.request("GET", "/v1/me", { headers: apiKey(m.key) });
    expect(me.body).toMatchObject({
      mode: "sandbox",
      tenant: { mode: "sandbox", certifiedAt: null, liveEnabledAt: null },
      principal: { kind: "apiKey", mode: "sandbox" },
    });
  });

  test("after certification a live key reads svc_live_…, GET /v1/me names its mode, and the sandbox key stays sandbox", async () => {
    const m = await sandboxTenant(t);
    await certify(m.tenantId);
    const live = await newKey(m.token, { name: "live", mode: "live" });
    expect(live.status).toBe(201);
    const key = live.body.key as string;
    expect(key).toMatch(/^svc_live_[A-Za-z0-9]{32}$/);
    expect(live.body).toMatchObject({ mode: "live", prefix: key.slice(0, 13) });
    const meLive = await t.request("GET", "/v1/me", { headers: apiKey(key) });
    expect(meLive.body).toMatchObject({ mode: "live", tenant: { mode: "live" }, principal: { kind: "apiKey", mode: "live" } });
    // DECISIONS.md "Modes": liveEnabledAt = certifiedAt.
    expect(meLive.body.tenant.certifiedAt).toEqual(expect.any(String));
    expect(meLive.body.tenant.liveEnabledAt).toBe(meLive.body.tenant.certifiedAt);
    // Its merchant configurations show the chains a live key lends on.
    expect(meLive.body.merchantConfigs[0].chain).toBe("POLYGON");
    const meSandbox = await t.request("GET", "/v1/me", { headers: apiKey(m.key) });
    expect(meSandbox.body).toMatchObject({ mode: "sandbox", tenant: { mode: "live" }, principal: { mode: "sandbox" } });
    expect(meSandbox.body.merchantConfigs[0].chain).toBe("POLYGON_AMOY");
    const list = await t.request("GET", "/v1/api-keys", { headers: bearer(m.token) });
    expect(list.body.data.map((k: { mode: string }) => k.mode).sort()).toEqual(["live", "sandbox"]);
  });
});

describe("a request acts in its key's mode", () => {
  test("a live key's loan on POLYGON records mode live and waits for liquidity; no sandbox pool moves", async () => {
    const m = await tenantOfBothModes();
    expect(m.liveLoan).toMatchObject({
      chain: "POLYGON",
      mode: "live",
      status: "CREATED",
      fundingState: "AWAITING_LIQUIDITY",
      decision: { outcome: "APPROVED" },
    });
    const poolsAfter = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
    expect(poolsAfter).toEqual(m.poolsBefore);
    expect(poolsAfter.every((p) => p.mode === "sandbox")).toBe(true);
    const [row] = await t.db.select().from(loans).where(eq(loans.id, m.liveLoan.id));
    expect(row).toMatchObject({ mode: "live", poolId: null });
    expect(m.sandboxLoan).toMatchObject({ chain: "POLYGON_AMOY", mode: "sandbox", status: "ACTIVE" });
  });

  test("a sandbox key still lends on sandbox chains after certification, from the sandbox pool", async () => {
    const m = await tenantOfBothModes();
    // The policy now requires KYC (shared by both modes): a verified borrower.
    const loan = await createdLoan(t, m.key, { borrowerRef: m.liveBorrower });
    expect(loan).toMatchObject({ chain: "POLYGON_AMOY", mode: "sandbox", status: "ACTIVE", fundingState: "FUNDED" });
  });

  test("a sandbox key on a live chain and a live key on a sandbox chain: 403 saying so, and no loan", async () => {
    const m = await tenantOfBothModes();
    const sandboxOnLive = await createLoan(t, m.key, { chain: "POLYGON", idempotencyKey: "wrong-chain-1" });
    expect(sandboxOnLive.status).toBe(403);
    expect(sandboxOnLive.body).toEqual(
      forbidden("chain POLYGON is a live chain and this is a sandbox API key (svc_test_…); live loans need a live key (svc_live_…)"),
    );
    const liveOnSandbox = await createLoan(t, m.liveKey, { chain: "POLYGON_AMOY", idempotencyKey: "wrong-chain-2" });
    expect(liveOnSandbox.status).toBe(403);
    expect(liveOnSandbox.body).toEqual(
      forbidden("chain POLYGON_AMOY is a sandbox chain and this is a live API key (svc_live_…); sandbox loans need a sandbox key (svc_test_…)"),
    );
    const made = await t.db.select({ key: loans.idempotencyKey }).from(loans).where(eq(loans.tenantId, m.tenantId));
    expect(made.map((r) => r.key)).not.toContain("wrong-chain-1");
    expect(made.map((r) => r.key)).not.toContain("wrong-chain-2");
  });

  test("a certified tenant's sandbox key keeps the sandbox chain helpers; its live key is refused them", async () => {
    const m = await tenantOfBothModes();
    const body = { chain: "POLYGON_AMOY", address: m.sandboxLoan.borrowerWalletAddress, amount: "5.00" };
    expect((await t.request("POST", "/v1/sandbox/chain/faucet", { body, headers: apiKey(m.key) })).status).toBe(200);
    expect((await t.request("POST", "/v1/sandbox/chain/faucet", { body, headers: apiKey(m.liveKey) })).status).toBe(403);
    const account = `/v1/sandbox/chain/accounts/${body.address}?chain=POLYGON_AMOY`;
    expect((await t.request("GET", account, { headers: apiKey(m.key) })).body).toMatchObject({ balance: expect.any(String), nonce: 0 });
    expect((await t.request("GET", account, { headers: apiKey(m.liveKey) })).status).toBe(403);
  });

  test("a live key on the sandbox helpers: 403 before anything moves", async () => {
    const m = await tenantOfBothModes();
    const [before] = await t.db.select({ offset: tenants.clockOffsetMs }).from(tenants).where(eq(tenants.id, m.tenantId));
    const res = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: apiKey(m.liveKey) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(forbidden("Sandbox helpers are for sandbox API keys (svc_test_…) only; this is a live key"));
    const [after] = await t.db.select({ offset: tenants.clockOffsetMs }).from(tenants).where(eq(tenants.id, m.tenantId));
    expect(after).toEqual(before!);
  });

  test("the sandbox helpers neither count nor touch live loans: liquidity's stillWaiting, a clock advance's sweep", async () => {
    const m = await tenantOfBothModes();
    expect(m.liveLoan).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    // A live loan waits for liquidity; no sandbox loan does.
    const refill = await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00" }, headers: apiKey(m.key) });
    expect(refill.status).toBe(200);
    expect(refill.body.stillWaiting).toBe(0);
    // A live loan past due on the real clock: the cron's to sweep, not the sandbox clock's.
    const dueAt = new Date(t.clock.now().getTime() - 2 * 86_400_000);
    await t.db.update(loans).set({ status: "ACTIVE", fundingState: "FUNDED", dueAt }).where(eq(loans.id, m.liveLoan.id));
    const moved = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 60 }, headers: apiKey(m.key) });
    expect(moved.status).toBe(200);
    expect(moved.body.swept).toEqual({ visited: 0, failed: 0 });
    const [live] = await t.db.select({ overdueAt: loans.overdueAt, lateFeeDays: loans.lateFeeDays }).from(loans).where(eq(loans.id, m.liveLoan.id));
    expect(live).toEqual({ overdueAt: null, lateFeeDays: 0 });
  });

  test("an idempotency key is per mode: the live key reusing a sandbox loan's key makes a live loan, never returns the sandbox one", async () => {
    const m = await sandboxTenant(t);
    const sandboxLoan = await createdLoan(t, m.key, { idempotencyKey: "same-key" });
    await certify(m.tenantId);
    const liveKey = (await newKey(m.token, { name: "live", mode: "live" })).body.key;
    const live = await createLoan(t, liveKey, { chain: "POLYGON", idempotencyKey: "same-key" });
    expect(live.status).toBe(201);
    expect(live.body.id).not.toBe(sandboxLoan.id);
    expect(live.body.mode).toBe("live");
    const again = await createLoan(t, m.key, { idempotencyKey: "same-key" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(sandboxLoan.id);
  });
});

describe("the live safe default", () => {
  test("a live loan under a policy and settings that require no KYC is DECLINED with LIVE_KYC_POLICY_REQUIRED; no funds move", async () => {
    const m = await sandboxTenant(t);
    await certify(m.tenantId);
    const liveKey = (await newKey(m.token, { name: "live", mode: "live" })).body.key;
    const res = await createLoan(t, liveKey, { chain: "POLYGON", idempotencyKey: "no-kyc-policy" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ mode: "live", status: "CREATED", derivedStatus: "DECLINED", fundedAt: null, fundingTxHash: null });
    expect(res.body.decision.outcome).toBe("DECLINED");
    expect(res.body.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["LIVE_KYC_POLICY_REQUIRED"]);
    // The same tenant's sandbox loans are not held to it.
    const sandbox = await createdLoan(t, m.key, { idempotencyKey: "sandbox-no-kyc" });
    expect(sandbox).toMatchObject({ mode: "sandbox", status: "ACTIVE" });
  });
});

describe("widget programs keep their embed key's mode", () => {
  test("a sandbox program (ek_test_…) of a certified tenant still lends on the sandbox chain", async () => {
    const m = await sandboxTenant(t);
    const me = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body;
    const embedKey = me.widgetPrograms[0].embedKey as string;
    expect(embedKey).toStartWith("ek_test_");
    await certify(m.tenantId);
    expect((await programContext(t.db, embedKey)).chain).toBe("POLYGON_AMOY");
  });

  test("a program's mode is chosen when it is made: sandbox by default, live only once certified (403 and nothing made before)", async () => {
    const m = await sandboxTenant(t);
    const me = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body;
    const terms = { name: "Checkout", merchantConfigId: me.merchantConfigs[0].id, allowedOrigins: ["https://shop.example.com"] };
    const make = (body: Record<string, unknown>) => t.request("POST", "/v1/widget-programs", { body, headers: bearer(m.token) });
    const countPrograms = async () => (await t.request("GET", "/v1/widget-programs", { headers: bearer(m.token) })).body.data.length as number;

    const before = await countPrograms();
    const early = await make({ ...terms, mode: "live" });
    expect(early.status).toBe(403);
    expect(early.body).toEqual(forbidden(/^Live widget programs are made after go-live certification/));
    expect(await countPrograms()).toBe(before);
    expect((await make({ ...terms, mode: "production" })).status).toBe(400);

    await certify(m.tenantId);
    const byDefault = await make(terms);
    expect(byDefault.status).toBe(201);
    expect(byDefault.body.mode).toBe("sandbox");
    expect(byDefault.body.embedKey).toStartWith("ek_test_");
    const live = await make({ ...terms, mode: "live" });
    expect(live.status).toBe(201);
    expect(live.body.mode).toBe("live");
    expect(live.body.embedKey).toStartWith("ek_live_");
    expect((await programContext(t.db, live.body.embedKey)).chain).toBe("POLYGON");
    expect((await programContext(t.db, byDefault.body.embedKey)).chain).toBe("POLYGON_AMOY");
    // PUT never changes it: the embed key (and so the mode) is the program's for life.
    const put = await t.request("PUT", `/v1/widget-programs/${live.body.id}`, { body: { ...terms, mode: "sandbox" }, headers: bearer(m.token) });
    expect(put.body).toMatchObject({ mode: "live", embedKey: live.body.embedKey });
  });
});

describe("a key sees only its own mode", () => {
  test("loans: lists and reads by id (the other mode's id: 404, like another tenant's), settlements too", async () => {
    const m = await tenantOfBothModes();
    const sandboxList = await t.request("GET", "/v1/loans", { headers: apiKey(m.key) });
    expect(sandboxList.body.data.map((l: { id: string }) => l.id)).toEqual([m.sandboxLoan.id]);
    const liveList = await t.request("GET", "/v1/loans", { headers: apiKey(m.liveKey) });
    expect(liveList.body.data.map((l: { id: string }) => l.id)).toEqual([m.liveLoan.id]);

    const notFound = { statusCode: 404, message: "Loan not found", error: "Not Found" };
    expect((await t.request("GET", `/v1/loans/${m.liveLoan.id}`, { headers: apiKey(m.key) })).body).toEqual(notFound);
    expect((await t.request("GET", `/v1/loans/${m.sandboxLoan.id}`, { headers: apiKey(m.liveKey) })).body).toEqual(notFound);
    expect((await t.request("GET", `/v1/settlements/${m.sandboxLoan.id}`, { headers: apiKey(m.liveKey) })).status).toBe(404);
    expect((await t.request("POST", `/v1/loans/${m.liveLoan.id}/agreement-challenge`, { headers: apiKey(m.key) })).status).toBe(404);
    const own = await t.request("GET", `/v1/loans/${m.liveLoan.id}`, { headers: apiKey(m.liveKey) });
    expect(own.body).toMatchObject({ id: m.liveLoan.id, mode: "live" });
    const settled = await t.request("GET", `/v1/settlements/${m.sandboxLoan.id}`, { headers: apiKey(m.key) });
    expect(settled.body.data).toEqual([expect.objectContaining({ kind: "FUNDING", mode: "sandbox" })]);

    // Asking for the other mode is refused, not silently emptied.
    const across = await t.request("GET", "/v1/loans?mode=live", { headers: apiKey(m.key) });
    expect(across.status).toBe(403);
    expect(across.body).toEqual(forbidden(/^This is a sandbox API key; it sees sandbox data only/));
  });

  test("events carry their loan's mode; each key lists and reads only its own", async () => {
    const m = await tenantOfBothModes();
    const live = (await t.request("GET", "/v1/events", { headers: apiKey(m.liveKey) })).body;
    expect(typesOf(live)).toEqual(["liquidity.unavailable", "loan.funding_failed", "loan.decision", "loan.application_submitted"]);
    expect(live.data.every((e: { mode: string; data: { loan?: { id: string; mode: string } } }) => e.mode === "live" && e.data.loan?.mode === "live")).toBe(
      true,
    );
    const sandbox = (await t.request("GET", "/v1/events", { headers: apiKey(m.key) })).body;
    expect(typesOf(sandbox)).toEqual(["loan.funded", "loan.decision", "loan.application_submitted"]);
    expect(sandbox.data.every((e: { mode: string }) => e.mode === "sandbox")).toBe(true);

    const liveEvent = live.data[0].id;
    expect((await t.request("GET", `/v1/events/${liveEvent}`, { headers: apiKey(m.key) })).status).toBe(404);
    expect((await t.request("GET", `/v1/events/${liveEvent}`, { headers: apiKey(m.liveKey) })).body).toMatchObject({ id: liveEvent, mode: "live" });
    // The loan filter cannot reach across either.
    expect((await t.request("GET", `/v1/events?loanId=${m.liveLoan.id}`, { headers: apiKey(m.key) })).body.data).toEqual([]);
    const [row] = await t.db
      .select({ mode: events.mode })
      .from(events)
      .where(and(eq(events.id, liveEvent), eq(events.tenantId, m.tenantId)));
    expect(row).toEqual({ mode: "live" });
  });

  test("notifications carry their event's mode; each key lists only its own", async () => {
    const m = await tenantOfBothModes();
    const live = (await t.request("GET", "/v1/notifications", { headers: apiKey(m.liveKey) })).body;
    expect(typesOf(live)).toEqual(["liquidity.unavailable", "loan.funding_failed", "loan.decision", "loan.application_submitted"]);
    expect(live.data.every((n: { mode: string }) => n.mode === "live")).toBe(true);
    const sandbox = (await t.request("GET", "/v1/notifications", { headers: apiKey(m.key) })).body;
    expect(typesOf(sandbox)).toEqual(["loan.funded", "loan.decision", "loan.application_submitted"]);
    expect(sandbox.data.every((n: { mode: string }) => n.mode === "sandbox")).toBe(true);
    // Reading another mode's notification: 404; read-all marks only the key's own.
    expect((await t.request("POST", `/v1/notifications/${live.data[0].id}/read`, { headers: apiKey(m.key) })).status).toBe(404);
    expect((await t.request("POST", "/v1/notifications/read-all", { headers: apiKey(m.key) })).body).toEqual({ updated: 3 });
    const unreadLive = (await t.request("GET", "/v1/notifications?unread=true", { headers: apiKey(m.liveKey) })).body;
    expect(unreadLive.data).toHaveLength(4);
  });

  test("unmatched payments: a key sees only its own mode's (by chain)", async () => {
    const m = await tenantOfBothModes();
    const sandbox = await t.request("GET", "/v1/settlements/unmatched", { headers: apiKey(m.key) });
    expect(sandbox.status).toBe(200);
    expect((await t.request("GET", "/v1/settlements/unmatched?mode=live", { headers: apiKey(m.key) })).status).toBe(403);
    expect((await t.request("GET", "/v1/settlements/unmatched", { headers: apiKey(m.liveKey) })).body.data).toEqual([]);
  });
});

describe("what both modes share", () => {
  test("once certified, a sandbox key may no longer change the policy or a borrower's KYC; the live key may", async () => {
    const m = await tenantOfBothModes();
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    const bySandbox = await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.key) });
    expect(bySandbox.status).toBe(403);
    expect(bySandbox.body).toEqual(forbidden(/^The underwriting policy applies to live loans too once the tenant is certified/));
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(m.liveKey) })).status).toBe(200);

    const kyc = { status: "VERIFIED", merchantUserId: "compliance-1" };
    const path = `/v1/borrowers/${encodeURIComponent(m.liveLoan.borrowerRef)}/kyc`;
    const kycBySandbox = await t.request("PATCH", path, { body: kyc, headers: apiKey(m.key) });
    expect(kycBySandbox.status).toBe(403);
    expect(kycBySandbox.body).toEqual(forbidden(/^A borrower's KYC status applies to live loans too/));
    expect((await t.request("PATCH", path, { body: kyc, headers: apiKey(m.liveKey) })).status).toBe(200);

    // A sandbox widget line's KYC confirmation by the sandbox key confirms the line, not the borrower's shared KYC.
    const me = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body;
    const program = await programContext(t.db, me.widgetPrograms[0].embedKey);
    const line = await creditLineFor({ db: t.db }, { program, wallet: newWallet(), now: t.clock.now() });
    const confirm = await t.request("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, {
      body: { verified: true, borrowerRef: "widget-shopper-1" },
      headers: apiKey(m.key),
    });
    expect(confirm.status).toBe(200);
    expect(confirm.body).toEqual({
      id: line.id,
      walletAddress: line.walletAddress,
      borrowerRef: "widget-shopper-1",
      kycConfirmedAt: expect.any(String),
      requiresKyc: false,
      borrowerKycStatus: null,
    });
    expect((await t.request("GET", "/v1/borrowers/widget-shopper-1", { headers: apiKey(m.liveKey) })).status).toBe(404);
    // And the live key does not find a sandbox program's line.
    expect((await t.request("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, { body: { verified: true }, headers: apiKey(m.liveKey) })).status).toBe(
      404,
    );
  });

  test("maxOpenLoansPerBorrower counts the loan's own mode: an open sandbox loan does not block the borrower's live loan", async () => {
    const m = await tenantOfBothModes();
    await requireKyc(m.liveKey, m.sandboxLoan.borrowerRef, { maxOpenLoansPerBorrower: 1 });
    const live = await createLoan(t, m.liveKey, { chain: "POLYGON", borrowerRef: m.sandboxLoan.borrowerRef });
    expect(live.status).toBe(201);
    expect(live.body).toMatchObject({ mode: "live", decision: { outcome: "APPROVED" } });
    // The same mode still counts: a second sandbox loan of that borrower is declined for it.
    const second = await createLoan(t, m.key, { borrowerRef: m.sandboxLoan.borrowerRef });
    expect(second.body.decision).toMatchObject({ outcome: "DECLINED", reasons: [expect.objectContaining({ code: "MAX_OPEN_LOANS" })] });
  });
});

describe("webhook endpoints are per mode", () => {
  test("an endpoint receives only its mode's events; a key manages only its mode's endpoints and deliveries", async () => {
    const m = await sandboxTenant(t);
    await certify(m.tenantId);
    const liveKey = (await newKey(m.token, { name: "live", mode: "live" })).body.key as string;
    const hook = (key: string, body: Record<string, unknown> = {}) =>
      t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/svc", events: ["*"], ...body }, headers: apiKey(key) });
    const sandboxHook = await hook(m.key);
    const liveHook = await hook(liveKey);
    expect([sandboxHook.status, sandboxHook.body.mode, liveHook.status, liveHook.body.mode]).toEqual([201, "sandbox", 201, "live"]);
    const across = await hook(m.key, { mode: "live" });
    expect(across.status).toBe(403);

    await createdLoan(t, m.key);
    expect((await createLoan(t, liveKey, { chain: "POLYGON" })).status).toBe(201);

    const rows = await t.db
      .select({ endpointId: webhookDeliveries.endpointId, mode: events.mode })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.tenantId, m.tenantId));
    const modesAt = (id: string) => [...new Set(rows.filter((r) => r.endpointId === id).map((r) => r.mode))];
    expect(modesAt(sandboxHook.body.id)).toEqual(["sandbox"]);
    expect(modesAt(liveHook.body.id)).toEqual(["live"]);
    expect(rows).toHaveLength(rows.filter((r) => r.endpointId === sandboxHook.body.id || r.endpointId === liveHook.body.id).length);

    const deliveriesOf = async (headers: Record<string, string>, query = "") =>
      new Set((await t.request("GET", `/v1/webhooks/deliveries${query}`, { headers })).body.data.map((d: { endpointId: string }) => d.endpointId));
    expect(await deliveriesOf(apiKey(m.key))).toEqual(new Set([sandboxHook.body.id]));
    expect(await deliveriesOf(apiKey(liveKey))).toEqual(new Set([liveHook.body.id]));
    expect(await deliveriesOf(bearer(m.token))).toEqual(new Set([sandboxHook.body.id, liveHook.body.id]));
    expect(await deliveriesOf(bearer(m.token), "?mode=live")).toEqual(new Set([liveHook.body.id]));
    // Paged one by one, the session's list of both modes is each mode's list merged newest first, each delivery once.
    const idsOf = (headers: Record<string, string>, limit: number) =>
      pageThrough<{ id: string; createdAt: string }>(
        async (cursor) =>
          (await t.request("GET", `/v1/webhooks/deliveries?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers })).body,
      );
    const merged = [...(await idsOf(apiKey(m.key), 100)), ...(await idsOf(apiKey(liveKey), 100))].sort(
      (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : -1),
    );
    expect(merged.length).toBeGreaterThan(3);
    expect((await idsOf(bearer(m.token), 1)).map((d) => d.id)).toEqual(merged.map((d) => d.id));

    const listed = (await t.request("GET", "/v1/webhooks", { headers: apiKey(liveKey) })).body.data;
    expect(listed.map((e: { id: string }) => e.id)).toEqual([liveHook.body.id]);
    expect((await t.request("GET", "/v1/webhooks", { headers: bearer(m.token) })).body.data).toHaveLength(2);
    expect((await t.request("DELETE", `/v1/webhooks/${sandboxHook.body.id}`, { headers: apiKey(liveKey) })).status).toBe(404);
    expect((await t.request("DELETE", `/v1/webhooks/${sandboxHook.body.id}`, { headers: apiKey(m.key) })).status).toBe(204);
  });
});

describe("a dashboard session sees both modes", () => {
  test("events and notifications of both, narrowed by the mode filter", async () => {
    const m = await tenantOfBothModes();
    const session = bearer(m.token);
    const all = (await t.request("GET", "/v1/events", { headers: session })).body;
    expect(new Set(all.data.map((e: { mode: string }) => e.mode))).toEqual(new Set(["sandbox", "live"]));
    expect(all.data).toHaveLength(7);
    const live = (await t.request("GET", "/v1/events?mode=live", { headers: session })).body;
    expect(typesOf(live)).toEqual(["liquidity.unavailable", "loan.funding_failed", "loan.decision", "loan.application_submitted"]);
    const sandbox = (await t.request("GET", "/v1/events?mode=sandbox", { headers: session })).body;
    expect(typesOf(sandbox)).toEqual(["loan.funded", "loan.decision", "loan.application_submitted"]);
    expect((await t.request("GET", `/v1/events/${live.data[0].id}`, { headers: session })).body.mode).toBe("live");
    expect((await t.request("GET", "/v1/events?mode=both", { headers: session })).status).toBe(400);
    // A type of both modes, paged one by one: each mode's events of the type merged newest first, each once.
    const decisions = await pageThrough<{ id: string; mode: string }>(
      async (cursor) =>
        (await t.request("GET", `/v1/events?type=loan.decision&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: session })).body,
    );
    const decisionIds = all.data.filter((e: { type: string }) => e.type === "loan.decision").map((e: { id: string }) => e.id);
    expect(decisions.map((e) => e.id)).toEqual(decisionIds);
    expect(decisions.map((e) => e.mode).sort()).toEqual(["live", "sandbox"]);

    const notes = (await t.request("GET", "/v1/notifications", { headers: session })).body;
    expect(notes.data).toHaveLength(7);
    const liveNotes = (await t.request("GET", "/v1/notifications?mode=live", { headers: session })).body;
    expect(liveNotes.data.map((n: { mode: string }) => n.mode)).toEqual(["live", "live", "live", "live"]);
    const sandboxNotes = (await t.request("GET", "/v1/notifications?mode=sandbox", { headers: session })).body;
    expect(sandboxNotes.data).toHaveLength(3);
  });
});
