import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { agreements } from "../../../db/schema/loan-records.ts";
import { loans } from "../../../db/schema/loans.ts";
import { testTonWallet } from "../../../shared/agreements/testing/test-wallets.ts";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { bearer, createKey, signUpTenant } from "../../../shared/testing/fixtures.ts";
import { createEmbedTestApp } from "../testing/harness.ts";

/**
 * A widget draw keeps its agreement (issue 10, item 4): the exact message the
 * wallet signed and the signature (and on TON the public key, timestamp and
 * domain) are stored with the loan, immutably, and shown on it long after the
 * challenge object is gone.
 */
const ORIGIN = "https://shop.example";
let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

async function merchant(rail?: { network: "TON"; stablecoin: "USDT" }) {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body;
  let merchantConfigId = me.widgetPrograms[0].merchantConfigId as string;
  if (rail) {
    const config = await t.request("POST", "/v1/merchant-configs", {
      body: {
        ...rail,
        tenures: [3, 7],
        minTicket: "10.00",
        maxTicket: "500.00",
        gracePeriodDays: 3,
        processingFee: { type: "FIXED", value: "1.00" },
        lateFee: { type: "FIXED", value: "0.50" },
      },
      headers: bearer(owner.token),
    });
    expect(config.status).toBe(201);
    merchantConfigId = config.body.id;
  }
  const program = await t.request("POST", "/v1/widget-programs", {
    body: { name: "Shop", merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: bearer(owner.token),
  });
  expect(program.status).toBe(201);
  return { key, token: owner.token, tenantId: owner.tenantId, programId: program.body.id as string, embedKey: program.body.embedKey as string };
}
type M = Awaited<ReturnType<typeof merchant>>;
const embed = (m: M, path: string, body: unknown) => e.request("POST", `/v1/embed/${m.embedKey}${path}`, { body, headers: { origin: ORIGIN } });
const getLoan = (m: M, id: string) => t.request("GET", `/v1/loans/${id}`, { headers: { "x-api-key": m.key } });

describe("a widget draw's agreement", () => {
  test("EVM: the loan shows the exact signed message and signature a day later; the stored row cannot be changed", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await embed(m, "/quote", { walletAddress: account.address, amount: "100.00", tenureDays: 7 });
    expect(q.status).toBe(200);
    const { id: challengeId, message } = q.body.agreementChallenge;
    const walletSignature = await account.signMessage({ message });
    const accepted = await embed(m, "/accept", {
      walletAddress: account.address,
      amount: "100.00",
      tenureDays: 7,
      agreementChallengeId: challengeId,
      walletSignature,
      channel: "WEB",
    });
    expect(accepted.status).toBe(201);
    const loanId = accepted.body.loan.id as string;

    const advanced = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: { "x-api-key": m.key } });
    expect(advanced.status).toBe(200);
    const got = await getLoan(m, loanId);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: loanId, status: "ACTIVE", program: m.programId, kycGate: { agreementRecorded: true } });
    expect(got.body.agreement).toEqual({
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
    const [row] = await t.db.select().from(agreements).where(eq(agreements.loanId, loanId));
    expect((await t.db.select({ agreementId: loans.agreementId }).from(loans).where(eq(loans.id, loanId)))[0]!.agreementId).toBe(row!.id);
    for (const statement of [
      sql`UPDATE agreements SET message = 'other terms' WHERE loan_id = ${loanId}`,
      sql`DELETE FROM agreements WHERE loan_id = ${loanId}`,
      sql`UPDATE loans SET agreement_id = NULL WHERE id = ${loanId}`,
    ]) {
      const refused = await (async () => t.db.run(statement))().then(
        () => null,
        (err: Error) => err,
      );
      expect(String(refused?.cause ?? refused)).toContain("immutable");
    }
    expect((await getLoan(m, loanId)).body.agreement.message).toBe(message);
  });

  test("TON: the public key, timestamp and domain are kept with the signature; the wallet's real-time timestamp passes on a sandbox clock a day ahead", async () => {
    const m = await merchant({ network: "TON", stablecoin: "USDT" });
    // The sandbox clock moves challenges and loans, not the wallet's own clock.
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: { "x-api-key": m.key } })).status).toBe(200);
    const wallet = testTonWallet("v5r1");
    const q = await embed(m, "/quote", { walletAddress: wallet.address, amount: "50.00", tenureDays: 3 });
    expect(q.status).toBe(200);
    const signed = await wallet.signData({
      text: q.body.agreementChallenge.message,
      domain: "embed.svc-credit.test",
      timestamp: Math.floor(t.clock.now().getTime() / 1000),
    });
    const accepted = await embed(m, "/accept", {
      walletAddress: wallet.address,
      amount: "50.00",
      tenureDays: 3,
      agreementChallengeId: q.body.agreementChallenge.id,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: signed.domain,
      channel: "ANDROID",
    });
    expect(accepted.status).toBe(201);
    const got = await getLoan(m, accepted.body.loan.id);
    expect(got.body.agreement).toMatchObject({
      chain: "TON_TESTNET",
      message: q.body.agreementChallenge.message,
      walletSignature: signed.signature,
      publicKey: signed.publicKey,
      timestamp: signed.timestamp,
      domain: "embed.svc-credit.test",
    });
  });

  test("draws refused by the credit line's guarded insert leave no agreement behind: one agreement per loan made", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const bodies = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const q = await embed(m, "/quote", { walletAddress: account.address, amount: "400.00", tenureDays: 7 });
        const walletSignature = await account.signMessage({ message: q.body.agreementChallenge.message });
        return {
          walletAddress: account.address,
          amount: "400.00",
          tenureDays: 7,
          agreementChallengeId: q.body.agreementChallenge.id,
          walletSignature,
          channel: "WEB",
        };
      }),
    );
    const results = await Promise.all(bodies.map((body) => embed(m, "/accept", body)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 400, 400]);
    const made = await t.db.select({ id: loans.id, agreementId: loans.agreementId }).from(loans).where(eq(loans.programId, m.programId));
    expect(made).toHaveLength(2);
    const kept = await t.db.select({ id: agreements.id, loanId: agreements.loanId }).from(agreements).where(eq(agreements.tenantId, m.tenantId));
    expect(kept.map((a) => a.loanId).sort()).toEqual(made.map((l) => l.id).sort());
    for (const loan of made) expect(kept.find((a) => a.loanId === loan.id)!.id).toBe(loan.agreementId!);
  });
});
