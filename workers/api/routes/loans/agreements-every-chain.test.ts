import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { events } from "../../../../db/schema/events.ts";
import { agreements } from "../../../../db/schema/loan-records.ts";
import { loans } from "../../../../db/schema/loans.ts";
import { testSolanaWallet, testTonWallet } from "../../../../shared/agreements/testing/test-wallets.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";

/**
 * POST /v1/loans/:id/agreement on every chain family (issue 10, item 5): a
 * TON and a Solana API loan under `requiresKycBeforeFunding` fund once KYC is
 * confirmed and the borrower's signed agreement recorded, through the same
 * verifier as the widget; the agreement, with the TON Connect fields, shows
 * on the loan and cannot be changed in the database.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const EMBED_HOST = "embed.svc-credit.test"; // the harness's widgetHost (EMBED_HOST)
const SHOP = "https://shop.example";
const api = (key: string) => ({ "x-api-key": key });

/** A sandbox tenant with the KYC gate on, a TON/USDT rail with a funded pool, and SHOP among its default program's origins. */
async function gatedMerchant() {
  const owner = await signUpTenant(t, "Gated Lender");
  const { key } = await createKey(t, owner.token);
  const settings = await t.request("PUT", "/v1/settings", {
    body: { requiresKycBeforeFunding: true, branding: { companyName: "Gated Lender", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null } },
    headers: bearer(owner.token),
  });
  expect(settings.status).toBe(200);
  const ton = await t.request("POST", "/v1/merchant-configs", {
    body: {
      network: "TON",
      stablecoin: "USDT",
      tenures: [3, 7],
      minTicket: "10.00",
      maxTicket: "1000.00",
      gracePeriodDays: 3,
      processingFee: { type: "PERCENTAGE", value: "2.00" },
      lateFee: { type: "FIXED", value: "1.00" },
    },
    headers: bearer(owner.token),
  });
  expect(ton.status).toBe(201);
  expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "100000.00", stablecoin: "USDT" }, headers: api(key) })).status).toBe(200);
  const me = (await t.request("GET", "/v1/me", { headers: api(key) })).body;
  const program = me.widgetPrograms[0];
  const put = await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [SHOP] },
    headers: bearer(owner.token),
  });
  expect(put.status).toBe(200);
  return {
    key,
    token: owner.token,
    tenantId: owner.tenantId,
    usdcProductId: me.merchantConfigs.find((c: { stablecoin: string }) => c.stablecoin === "USDC").loanProductId as string,
    tonProductId: ton.body.loanProductId as string,
  };
}
type Merchant = Awaited<ReturnType<typeof gatedMerchant>>;

async function gatedLoan(m: Merchant, body: { loanProductId: string; chain: string; borrowerWalletAddress: string }) {
  const res = await t.request("POST", "/v1/loans", {
    body: { ...body, borrowerRef: "b-1", principalAmount: "100.00", tenureDays: 3, idempotencyKey: crypto.randomUUID() },
    headers: api(m.key),
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({
    status: "CREATED",
    fundingState: "WAITING_KYC",
    kycGate: { required: true, kycConfirmed: false, agreementRecorded: false },
  });
  const kyc = await t.request("POST", `/v1/loans/${res.body.id}/kyc-confirmation`, { body: { verified: true, merchantUserId: "ops-1" }, headers: api(m.key) });
  expect(kyc.status).toBe(201);
  expect(kyc.body.loan.fundingState).toBe("WAITING_KYC");
  const challenge = await t.request("POST", `/v1/loans/${res.body.id}/agreement-challenge`, { headers: api(m.key) });
  expect(challenge.status).toBe(201);
  return { loan: res.body, challenge: challenge.body as { id: string; message: string } };
}

const agree = (m: Merchant, loanId: string, body: Record<string, unknown>) => t.request("POST", `/v1/loans/${loanId}/agreement`, { body, headers: api(m.key) });
const eventTypes = async (loanId: string) =>
  (await t.db.select({ type: events.type }).from(events).where(eq(events.loanId, loanId)).orderBy(events.seq)).map((e) => e.type);
const realSeconds = () => Math.floor(t.clock.now().getTime() / 1000);

describe("TON: a TON Connect signData agreement", () => {
  test("a TON_TESTNET loan under the KYC gate funds after KYC and the signed agreement; the loan shows the agreement with its TON fields", async () => {
    const m = await gatedMerchant();
    const wallet = testTonWallet("v4");
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.tonProductId, chain: "TON_TESTNET", borrowerWalletAddress: wallet.address });
    expect(challenge.message).toContain("Chain: TON_TESTNET");
    const signed = await wallet.signData({ text: challenge.message, domain: EMBED_HOST, timestamp: realSeconds() });
    const res = await agree(m, loan.id, {
      agreementChallengeId: challenge.id,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: signed.domain,
    });
    expect(res.status).toBe(201);
    const agreement = {
      id: expect.any(String),
      challengeId: challenge.id,
      walletAddress: loan.borrowerWalletAddress,
      chain: "TON_TESTNET",
      message: challenge.message,
      agreementText: challenge.message,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: EMBED_HOST,
      createdAt: expect.any(String),
    };
    expect(res.body.agreement).toEqual({ ...agreement, loanId: loan.id });
    expect(res.body.loan).toMatchObject({
      id: loan.id,
      status: "ACTIVE",
      fundingState: "FUNDED",
      kycGate: { required: true, kycConfirmed: true, agreementRecorded: true },
      agreement,
    });
    expect(await eventTypes(loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    const got = await t.request("GET", `/v1/loans/${loan.id}`, { headers: api(m.key) });
    expect(got.body).toMatchObject({ status: "ACTIVE", agreement });

    // Immutable in the database: the triggers refuse changing or deleting it, and unlinking or replacing it on the loan.
    for (const statement of [
      sql`UPDATE agreements SET wallet_signature = 'forged' WHERE loan_id = ${loan.id}`,
      sql`UPDATE agreements SET domain = 'evil.example' WHERE loan_id = ${loan.id}`,
      sql`DELETE FROM agreements WHERE loan_id = ${loan.id}`,
      sql`UPDATE loans SET agreement_id = NULL WHERE id = ${loan.id}`,
      sql`UPDATE loans SET agreement_id = ${crypto.randomUUID()} WHERE id = ${loan.id}`,
    ]) {
      const refused = await (async () => t.db.run(statement))().then(
        () => null,
        (e: Error) => e,
      );
      expect(String(refused?.cause ?? refused)).toContain("immutable");
    }
    const [kept] = await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id));
    expect(kept).toMatchObject({ walletSignature: signed.signature, domain: EMBED_HOST, publicKey: signed.publicKey, signedTimestamp: signed.timestamp });
    expect((await t.db.select({ agreementId: loans.agreementId }).from(loans).where(eq(loans.id, loan.id)))[0]!.agreementId).toBe(kept!.id);
  });

  test("a v5r1 wallet signing on a page among the tenant's program origins is accepted too", async () => {
    const m = await gatedMerchant();
    const wallet = testTonWallet("v5r1");
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.tonProductId, chain: "TON_TESTNET", borrowerWalletAddress: wallet.address });
    const signed = await wallet.signData({ text: challenge.message, domain: "shop.example", timestamp: realSeconds() });
    const res = await agree(m, loan.id, {
      agreementChallengeId: challenge.id,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: signed.domain,
    });
    expect(res.status).toBe(201);
    expect(res.body.loan).toMatchObject({ status: "ACTIVE", agreement: { domain: "shop.example" } });
  });

  test("missing TON fields, a foreign domain, a stale timestamp, another key: 400 naming the field, nothing recorded; the challenge survives them", async () => {
    const m = await gatedMerchant();
    const wallet = testTonWallet("v4");
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.tonProductId, chain: "TON_TESTNET", borrowerWalletAddress: wallet.address });
    const signed = await wallet.signData({ text: challenge.message, domain: EMBED_HOST, timestamp: realSeconds() });
    const body = {
      agreementChallengeId: challenge.id,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: signed.domain,
    };
    const refusal = async (over: Record<string, unknown>) => {
      const res = await agree(m, loan.id, { ...body, ...over });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Bad Request");
      return res.body.message as string[];
    };
    expect(await refusal({ publicKey: undefined })).toEqual(["publicKey: is required for a TON Connect signature (with timestamp and domain)"]);
    expect(await refusal({ timestamp: undefined })).toEqual(["timestamp: is required for a TON Connect signature (with publicKey and domain)"]);
    expect(await refusal({ domain: undefined })).toEqual(["domain: is required for a TON Connect signature (with publicKey and timestamp)"]);
    const elsewhere = await wallet.signData({ text: challenge.message, domain: "evil.example", timestamp: realSeconds() });
    expect((await refusal({ walletSignature: elsewhere.signature, domain: "evil.example" }))[0]).toStartWith("domain:");
    const stale = await wallet.signData({ text: challenge.message, domain: EMBED_HOST, timestamp: realSeconds() - 3600 });
    expect((await refusal({ walletSignature: stale.signature, timestamp: stale.timestamp }))[0]).toStartWith("timestamp:");
    const other = testTonWallet("v4");
    const byOther = await other.signData({ text: challenge.message, domain: EMBED_HOST, timestamp: realSeconds() });
    expect((await refusal({ walletSignature: byOther.signature, publicKey: other.publicKey }))[0]).toStartWith("publicKey:");
    expect((await refusal({ walletSignature: byOther.signature }))[0]).toStartWith("walletSignature:");
    expect(await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id))).toEqual([]);
    expect((await agree(m, loan.id, body)).status).toBe(201);
  });
});

describe("Solana: an ed25519 agreement", () => {
  test("a SOLANA_DEVNET loan under the KYC gate funds after KYC and the signed agreement (base58); no TON fields kept", async () => {
    const m = await gatedMerchant();
    const wallet = await testSolanaWallet();
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.usdcProductId, chain: "SOLANA_DEVNET", borrowerWalletAddress: wallet.address });
    const bad = await agree(m, loan.id, {
      agreementChallengeId: challenge.id,
      walletSignature: await (await testSolanaWallet()).signMessage(challenge.message),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(["walletSignature: is not the wallet's ed25519 signature of the challenge message"]);
    const signature = await wallet.signMessage(challenge.message);
    // TON fields sent along with another chain's signature are not part of what was signed: not kept.
    const res = await agree(m, loan.id, {
      agreementChallengeId: challenge.id,
      walletSignature: signature,
      agreementText: "Terms v2",
      domain: "ignored.example",
    });
    expect(res.status).toBe(201);
    expect(res.body.loan).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    expect(res.body.agreement).toMatchObject({
      chain: "SOLANA_DEVNET",
      walletAddress: wallet.address,
      message: challenge.message,
      agreementText: "Terms v2",
      walletSignature: signature,
      publicKey: null,
      timestamp: null,
      domain: null,
    });
    expect(await eventTypes(loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
  });

  test("a base64 signature is accepted too", async () => {
    const m = await gatedMerchant();
    const wallet = await testSolanaWallet();
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.usdcProductId, chain: "SOLANA_DEVNET", borrowerWalletAddress: wallet.address });
    const res = await agree(m, loan.id, { agreementChallengeId: challenge.id, walletSignature: await wallet.signMessage(challenge.message, "base64") });
    expect(res.status).toBe(201);
    expect(res.body.loan.status).toBe("ACTIVE");
  });
});

describe("EVM: the agreement shows on the loan", () => {
  test("GET /v1/loans/:id carries the agreement; another tenant still gets 404", async () => {
    const m = await gatedMerchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const { loan, challenge } = await gatedLoan(m, { loanProductId: m.usdcProductId, chain: "POLYGON_AMOY", borrowerWalletAddress: account.address });
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: api(m.key) })).body.agreement).toBeNull();
    const walletSignature = await account.signMessage({ message: challenge.message });
    expect((await agree(m, loan.id, { agreementChallengeId: challenge.id, walletSignature })).status).toBe(201);
    const got = await t.request("GET", `/v1/loans/${loan.id}`, { headers: api(m.key) });
    expect(got.body.agreement).toMatchObject({
      chain: "POLYGON_AMOY",
      message: challenge.message,
      walletSignature,
      publicKey: null,
      timestamp: null,
      domain: null,
    });
    const other = await gatedMerchant();
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: api(other.key) })).status).toBe(404);
  });
});
