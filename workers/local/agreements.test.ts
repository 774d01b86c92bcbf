import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testTonWallet } from "../../shared/agreements/testing/test-wallets.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Agreements on workerd (issue 10, acceptance): a widget loan shows its
 * signed message and signature a day later, long after the challenge's
 * Durable Object has been cleaned up; a TON API loan under the KYC gate
 * funds after its TON Connect signed agreement. Both over HTTP against the
 * bundled workers, with D1 and the challenge Durable Objects.
 */
describe("agreements on workerd", () => {
  let stack: TestStack;
  // The api worker's EMBED_HOST (wrangler.toml): a TON Connect domain API agreements may name.
  const EMBED_HOST = "embed.svc-credit.example";

  beforeAll(async () => {
    stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } } });
  }, 60_000);
  afterAll(() => stack?.dispose());

  test("a widget loan shows its exact signed message and signature a day later (after clock/advance); D1 refuses changing it", async () => {
    const ORIGIN = "http://localhost:5181";
    const m = await signUpMerchant(stack, "Widget Lender");
    const program = (await m.api("/v1/me")).body.widgetPrograms[0];
    const put = await m.dashboard(`/v1/widget-programs/${program.id}`, {
      method: "PUT",
      json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    });
    expect(put.status).toBe(200);
    const base = `/v1/embed/${m.embedKey}`;
    const account = privateKeyToAccount(generatePrivateKey());
    const quote = await stack.fetch(`${base}/quote`, {
      json: { walletAddress: account.address, amount: "100.00", tenureDays: 7 },
      headers: { origin: ORIGIN },
    });
    expect(quote.status).toBe(200);
    const { id: challengeId, message } = quote.body.agreementChallenge;
    const walletSignature = await account.signMessage({ message });
    const accepted = await stack.fetch(`${base}/accept`, {
      json: { walletAddress: account.address, amount: "100.00", tenureDays: 7, agreementChallengeId: challengeId, walletSignature, channel: "WEB" },
      headers: { origin: ORIGIN },
    });
    expect(accepted.status).toBe(201);
    const loanId = accepted.body.loan.id as string;

    const advanced = await m.api("/v1/sandbox/clock/advance", { json: { seconds: 86_400 } });
    expect(advanced.status).toBe(200);
    const loan = await m.api(`/v1/loans/${loanId}`);
    expect(loan.status).toBe(200);
    expect(loan.body).toMatchObject({ id: loanId, status: "ACTIVE", program: program.id, kycGate: { agreementRecorded: true } });
    expect(loan.body.agreement).toEqual({
      id: expect.any(String),
      challengeId,
      walletAddress: account.address,
      chain: "POLYGON_AMOY",
      message,
      agreementText: message,
      walletSignature,
      publicKey: null,
      timestamp: null,
      domain: null,
      createdAt: accepted.body.loan.createdAt,
    });

    const db = await stack.db();
    const update = await db
      .prepare("UPDATE agreements SET wallet_signature = 'forged' WHERE loan_id = ?")
      .bind(loanId)
      .run()
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(String(update)).toContain("immutable");
    const unlink = await db
      .prepare("UPDATE loans SET agreement_id = NULL WHERE id = ?")
      .bind(loanId)
      .run()
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(String(unlink)).toContain("immutable");
    expect((await m.api(`/v1/loans/${loanId}`)).body.agreement.walletSignature).toBe(walletSignature);
  });

  test("a TON API loan under the KYC gate funds after KYC and its TON Connect signed agreement; the loan shows the TON fields", async () => {
    const m = await signUpMerchant(stack, "Ton Lender");
    const settings = await m.dashboard("/v1/settings", {
      method: "PUT",
      json: { requiresKycBeforeFunding: true, branding: { companyName: "Ton Lender", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null } },
    });
    expect(settings.status).toBe(200);
    const config = await m.dashboard("/v1/merchant-configs", {
      json: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3, 7],
        minTicket: "10.00",
        maxTicket: "1000.00",
        gracePeriodDays: 3,
        processingFee: { type: "PERCENTAGE", value: "2.00" },
        lateFee: { type: "FIXED", value: "1.00" },
      },
    });
    expect(config.status).toBe(201);
    expect((await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "100000.00", stablecoin: "USDT" } })).status).toBe(200);

    const wallet = testTonWallet("v4");
    const created = await m.api("/v1/loans", {
      json: {
        loanProductId: config.body.loanProductId,
        borrowerRef: "ton-borrower",
        borrowerWalletAddress: wallet.address,
        chain: "TON_TESTNET",
        principalAmount: "100.00",
        tenureDays: 3,
        idempotencyKey: `ton-${crypto.randomUUID()}`,
      },
    });
    expect(created.status).toBe(201);
    const loanId = created.body.id as string;
    expect(created.body).toMatchObject({ status: "CREATED", fundingState: "WAITING_KYC", chain: "TON_TESTNET", stablecoin: "USDT" });
    expect((await m.api(`/v1/loans/${loanId}/kyc-confirmation`, { json: { verified: true, merchantUserId: "ops-1" } })).status).toBe(201);
    const challenge = await m.api(`/v1/loans/${loanId}/agreement-challenge`, { method: "POST" });
    expect(challenge.status).toBe(201);

    const signed = await wallet.signData({ text: challenge.body.message, domain: EMBED_HOST, timestamp: Math.floor(Date.now() / 1000) });
    // Without the TON Connect fields: 400 naming the first missing one; the challenge is not used up.
    const incomplete = await m.api(`/v1/loans/${loanId}/agreement`, { json: { agreementChallengeId: challenge.body.id, walletSignature: signed.signature } });
    expect(incomplete.status).toBe(400);
    expect(incomplete.body).toEqual({
      statusCode: 400,
      message: ["publicKey: is required for a TON Connect signature (with timestamp and domain)"],
      error: "Bad Request",
    });

    const agreed = await m.api(`/v1/loans/${loanId}/agreement`, {
      json: {
        agreementChallengeId: challenge.body.id,
        walletSignature: signed.signature,
        publicKey: signed.publicKey,
        timestamp: signed.timestamp,
        domain: signed.domain,
      },
    });
    expect(agreed.status).toBe(201);
    expect(agreed.body.loan).toMatchObject({
      id: loanId,
      status: "ACTIVE",
      fundingState: "FUNDED",
      kycGate: { required: true, kycConfirmed: true, agreementRecorded: true },
    });
    const loan = (await m.api(`/v1/loans/${loanId}`)).body;
    expect(loan).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    expect(loan.agreement).toMatchObject({
      chain: "TON_TESTNET",
      message: challenge.body.message,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: EMBED_HOST,
    });
    const events = await m.api(`/v1/events?loanId=${loanId}&limit=100`);
    expect((events.body.data as { type: string }[]).map((e) => e.type).reverse()).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
  });
});
