import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loans } from "../../../db/schema/loans.ts";
import { tenants } from "../../../db/schema/tenants.ts";
import { bearer } from "../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { apiKey, sandboxTenant } from "../../../shared/testing/loan-fixtures.ts";
import { evmBorrower, widgetCalls } from "../../../shared/testing/widget-borrower.ts";
import { createEmbedTestApp } from "../testing/harness.ts";

/**
 * A sandbox widget program after its tenant is certified (DECISIONS.md
 * "Modes": the tenant keeps its sandbox). The borrower's KYC is shared by
 * both modes, so a sandbox key no longer sets it; its credit-line KYC
 * confirmation still confirms the sandbox line (an audit found no credential
 * could, and the program's new borrowers stuck at KYC).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("a certified tenant's sandbox widget program", () => {
  test("once certified, a sandbox widget program still lends: the sandbox key confirms the line, a live key verifies the shared KYC the policy requires", async () => {
    const m = await sandboxTenant(t, "Certified Widget Ltd");
    await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, m.tenantId));
    const created = await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(m.token) });
    expect(created.status).toBe(201);
    const liveKey = created.body.key as string;
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: apiKey(liveKey) })).status).toBe(200);
    const me = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body;
    const embedKey = me.widgetPrograms[0].embedKey as string;
    expect(embedKey).toStartWith("ek_test_");
    const e = createEmbedTestApp(t);
    const post = (path: string, body: unknown) => e.request("POST", `/v1/embed/${embedKey}${path}`, { body });
    const borrower = evmBorrower();
    const bootstrap = await post("/credit-line/bootstrap", { walletAddress: borrower.address });
    expect(bootstrap.body).toMatchObject({ requiresKyc: true });
    const lineId = bootstrap.body.creditLine.id as string;

    // The sandbox key confirms its line (200, not 403): the widget goes on to the draw.
    const confirmed = await t.request("POST", `/v1/credit-lines/${lineId}/kyc-confirmation`, { body: { verified: true }, headers: apiKey(m.key) });
    expect(confirmed.body).toMatchObject({ requiresKyc: false, borrowerKycStatus: null, borrowerRef: `wallet:${borrower.address}` });
    expect((await post("/credit-line/bootstrap", { walletAddress: borrower.address })).body).toMatchObject({ requiresKyc: false });
    // The policy wants VERIFIED KYC, which the sandbox key could not give: underwriting declines the draw.
    const declined = await widgetCalls(post).draw(borrower, { amount: "50.00", tenureDays: 7 });
    expect(declined.status).toBe(201);
    expect(declined.body.loan.decision).toMatchObject({ outcome: "DECLINED", reasons: [expect.objectContaining({ code: "KYC_NOT_VERIFIED" })] });

    // A live key verifies the borrower (shared by both modes); the next sandbox draw is approved and funded.
    const kyc = { status: "VERIFIED", merchantUserId: "compliance-1" };
    const ref = encodeURIComponent(`wallet:${borrower.address}`);
    expect((await t.request("PATCH", `/v1/borrowers/${ref}/kyc`, { body: kyc, headers: apiKey(liveKey) })).status).toBe(200);
    const funded = await widgetCalls(post).draw(borrower, { amount: "50.00", tenureDays: 7 });
    expect(funded.status).toBe(201);
    expect(funded.body.loan).toMatchObject({ chain: "POLYGON_AMOY", status: "ACTIVE", decision: { outcome: "APPROVED" } });
  });
});

describe("the funding hold on a certified tenant's sandbox draws", () => {
  test("requiring KYC before funding, a sandbox draw of a borrower a live key FAILED is held, not funded: the reservation made with the decision applies the hold too (a review had it ACTIVE)", async () => {
    const m = await sandboxTenant(t, "Certified Hold Ltd");
    const settings = await t.request("PUT", "/v1/settings", {
      body: {
        requiresKycBeforeFunding: true,
        branding: { companyName: "Certified Hold Ltd", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null },
      },
      headers: bearer(m.token),
    });
    expect(settings.status).toBe(200);
    await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, m.tenantId));
    const liveKey = (await t.request("POST", "/v1/api-keys", { body: { name: "live", mode: "live" }, headers: bearer(m.token) })).body.key as string;
    const embedKey = (await t.request("GET", "/v1/me", { headers: bearer(m.token) })).body.widgetPrograms[0].embedKey as string;
    const e = createEmbedTestApp(t);
    const post = (path: string, body: unknown) => e.request("POST", `/v1/embed/${embedKey}${path}`, { body });
    const borrower = evmBorrower();
    const lineId = (await post("/credit-line/bootstrap", { walletAddress: borrower.address })).body.creditLine.id as string;
    const ref = encodeURIComponent(`wallet:${borrower.address}`);
    const failed = await t.request("PATCH", `/v1/borrowers/${ref}/kyc`, {
      body: { status: "FAILED", merchantUserId: "compliance-1" },
      headers: apiKey(liveKey),
    });
    expect(failed.status).toBe(200);
    // The sandbox key confirms the sandbox line and leaves the shared KYC as it is (FAILED).
    const confirmed = await t.request("POST", `/v1/credit-lines/${lineId}/kyc-confirmation`, { body: { verified: true }, headers: apiKey(m.key) });
    expect(confirmed.body).toMatchObject({ requiresKyc: false, borrowerKycStatus: "FAILED" });
    const drawn = await widgetCalls(post).draw(borrower, { amount: "50.00", tenureDays: 7 });
    expect(drawn.status).toBe(201);
    const [loan] = await t.db.select().from(loans).where(eq(loans.id, drawn.body.loan.id));
    expect(loan).toMatchObject({ status: "CREATED", decisionOutcome: "APPROVED", fundingState: "HELD", fundedAt: null, poolId: null });
  });
});
