import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { creditLines } from "../../../../db/schema/credit-lines.ts";
import { loans } from "../../../../db/schema/loans.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { createEmbedTestApp } from "../../testing/harness.ts";

/**
 * A draw may not pay one of the tenant's own wallets on the program's chain
 * (as `POST /v1/loans` refuses it): quote refuses it before any credit line
 * or challenge, and an accept for a wallet registered after its quote makes
 * no loan. Both 400 naming `walletAddress`.
 */

const ORIGIN = "https://shop.example";
let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

/** A certified tenant (certification written to the database) with a live program on POLYGON that allows ORIGIN; its policy requires no KYC. */
async function liveMerchant() {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body;
  await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, owner.tenantId));
  const program = await t.request("POST", "/v1/widget-programs", {
    body: { name: "Live checkout", merchantConfigId: me.merchantConfigs[0].id, allowedOrigins: [ORIGIN], mode: "live" },
    headers: bearer(owner.token),
  });
  expect(program.status).toBe(201);
  return { ...owner, programId: program.body.id as string, embedKey: program.body.embedKey as string };
}
type M = Awaited<ReturnType<typeof liveMerchant>>;

const call = (m: M, path: string, body: unknown) => e.request("POST", `/v1/embed/${m.embedKey}${path}`, { body, headers: { origin: ORIGIN } });
const quote = (m: M, walletAddress: string) => call(m, "/quote", { walletAddress, amount: "100.00", tenureDays: 7 });
const addWallet = async (m: M, role: string, address: string) =>
  expect((await t.request("POST", "/v1/wallets", { headers: bearer(m.token), body: { chain: "POLYGON", role, address } })).status).toBe(201);
const refused = (message: RegExp) => ({ statusCode: 400, message: [expect.stringMatching(message)], error: "Bad Request" });
const loansOf = (m: M) => t.db.select().from(loans).where(eq(loans.programId, m.programId));
const linesOf = (m: M) => t.db.select().from(creditLines).where(eq(creditLines.programId, m.programId));

describe("a live program whose merchant requires no KYC", () => {
  test("eligibility says LIVE_KYC_POLICY_REQUIRED before the borrower signs anything (underwriting declines every such draw); gone once the policy requires VERIFIED KYC", async () => {
    const m = await liveMerchant();
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const before = await call(m, "/eligibility", { walletAddress: wallet });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ eligible: false, reasons: [{ code: "LIVE_KYC_POLICY_REQUIRED", message: "This merchant cannot lend here yet" }] });
    const policy = { requireKycVerified: true, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [] };
    expect((await t.request("PUT", "/v1/policies", { body: policy, headers: bearer(m.token) })).status).toBe(200);
    const after = await call(m, "/eligibility", { walletAddress: wallet });
    expect(after.body.reasons.map((r: { code: string }) => r.code)).not.toContain("LIVE_KYC_POLICY_REQUIRED");
  });
});

describe("a draw to the tenant's own wallet", () => {
  test("quote: the tenant's COLLECTIONS wallet (lowercase here) is 400 naming walletAddress, no credit line, no challenge; another wallet quotes", async () => {
    const m = await liveMerchant();
    const collections = privateKeyToAccount(generatePrivateKey()).address;
    await addWallet(m, "COLLECTIONS", collections);
    const res = await quote(m, collections.toLowerCase());
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refused(/^walletAddress: .*this tenant's own COLLECTIONS wallet on POLYGON$/));
    expect(await linesOf(m)).toEqual([]);
    // The service's own addresses are refused the same way.
    const token = await quote(m, CHAIN_CONFIG.POLYGON.token.address);
    expect(token.body).toEqual(refused(/^walletAddress: .*token contract on POLYGON$/));
    expect((await quote(m, privateKeyToAccount(generatePrivateKey()).address)).status).toBe(200);
  });

  test("accept: a wallet the tenant registered as its DISBURSEMENT wallet after the quote is 400 naming walletAddress, and no loan", async () => {
    const m = await liveMerchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address);
    expect(q.status).toBe(200);
    await addWallet(m, "DISBURSEMENT", account.address);
    const res = await call(m, "/accept", {
      walletAddress: account.address,
      amount: "100.00",
      tenureDays: 7,
      agreementChallengeId: q.body.agreementChallenge.id,
      walletSignature: await account.signMessage({ message: q.body.agreementChallenge.message }),
      channel: "WEB",
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refused(/^walletAddress: .*this tenant's own DISBURSEMENT wallet on POLYGON$/));
    expect(await loansOf(m)).toEqual([]);
  });
});
