import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MERCHANT_CONFIG_EXAMPLE } from "../../openapi-examples.ts";
import { eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { operatorAudit } from "../../../../db/schema/go-live.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { wallets } from "../../../../db/schema/wallets.ts";
import { webhookEndpoints } from "../../../../db/schema/webhooks.ts";
import { DEV_OPERATOR_KEY, OPERATOR_KEY_HEADER } from "../../../../shared/auth/operator-key.ts";
import { GO_LIVE_STEP_KEYS } from "../../../../shared/domain/go-live.ts";
import { loadGoLiveFacts, type LiveLiquidityReader } from "../../../../shared/go-live/go-live-facts.ts";
import { certifyTenant, goLiveStatus, submitKyb as submitKybVerb } from "../../../../shared/go-live/go-live-verbs.ts";
import { liveLiquidityFromWallets } from "../../../../shared/go-live/live-liquidity.ts";
import { decideKyb } from "../../../../shared/go-live/operator-verbs.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { chainPortDouble, type ChainPortDouble } from "../../../../shared/testing/chain-port-double.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";
import { repayInSandbox } from "../../../../shared/testing/sandbox-repayment.ts";

/**
 * Issue 12's certification and operator slice, through the api app: the
 * checklist of a new tenant, the walk through the steps the existing data
 * can complete (KYB and terms by the operator, the signup's policy, product,
 * key, owner and branding, a webhook, a sandbox loan funded and repaid),
 * step 5 holding certification until a verified DISBURSEMENT wallet holds the minimum ticket, the operator's
 * credential and audit, and the KYB body's validation.
 */

let t: TestApp;
let chain: ChainPortDouble;
beforeAll(async () => {
  t = await createTestApp();
  // Live chains that answer (test only): balances per (chain, address), for step 5's DISBURSEMENT wallet.
  chain = chainPortDouble(t.deps.chain);
  t.deps.chain = chain;
});
afterAll(() => t.close());

const OPERATOR = { [OPERATOR_KEY_HEADER]: DEV_OPERATOR_KEY };
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const KYB = {
  legalName: "Acme Pay Ltd",
  registrationNumber: "HRB 123456",
  country: "de",
  documents: [{ kind: "certificate_of_incorporation", fileName: "incorporation.pdf", sha256: SHA.toUpperCase() }],
};

/** The test database, whose first batch runs `competitor` before it, as a second request committing in between would. */
function firstBatchAfter(competitor: () => Promise<unknown>): typeof t.db {
  let raced = false;
  return new Proxy(t.db, {
    get(target, prop, receiver) {
      if (prop !== "batch") return Reflect.get(target, prop, receiver);
      return async (statements: unknown) => {
        if (!raced) {
          raced = true;
          await competitor();
        }
        return (target.batch as (s: unknown) => unknown)(statements);
      };
    },
  });
}

const goLive = (headers: Record<string, string>) => t.request("GET", "/v1/go-live", { headers });
const submitKyb = (token: string, body: unknown = KYB) => t.request("POST", "/v1/go-live/kyb", { body, headers: bearer(token) });
const certify = (token: string) => t.request("POST", "/v1/go-live/certify", { headers: bearer(token) });
const decide = (tenantId: string, body: unknown, headers: Record<string, string> = OPERATOR) =>
  t.request("POST", `/v1/operator/tenants/${tenantId}/kyb`, { body, headers });
const terms = (tenantId: string, body: unknown, headers: Record<string, string> = OPERATOR) =>
  t.request("POST", `/v1/operator/tenants/${tenantId}/commercial-terms`, { body, headers });
const statuses = (body: any) => (body.steps as { status: string }[]).map((s) => s.status);
/** "DONE" × done, "PENDING", "BLOCKED" × the rest. */
const expected = (done: number) => GO_LIVE_STEP_KEYS.map((_, i) => (i < done ? "DONE" : i === done ? "PENDING" : "BLOCKED"));

/** The wallets slice's seam: a verified DISBURSEMENT wallet holding `balance` on the chain of the signup's product (minimum ticket 10.00) (the facts seam itself; the HTTP walk above uses real wallets on the chain-port double). */
const walletHolding =
  (balance: bigint): LiveLiquidityReader =>
  async () => ({ verifiedAt: new Date("2026-01-01T00:00:00Z"), balance, minPrincipal: 10_000_000n });

/** Adds a DISBURSEMENT wallet of `account` on `chain` and proves control (EIP-191); the verify answer. */
async function verifiedDisbursement(token: string, chain: string, account: ReturnType<typeof privateKeyToAccount>) {
  const wallet = await t.request("POST", "/v1/wallets", { headers: bearer(token), body: { chain, role: "DISBURSEMENT", address: account.address } });
  expect(wallet.status).toBe(201);
  const challenge = await t.request("POST", `/v1/wallets/${wallet.body.id}/challenge`, { headers: bearer(token) });
  expect(challenge.status).toBe(201);
  return t.request("POST", `/v1/wallets/${wallet.body.id}/verify`, {
    headers: bearer(token),
    body: { challengeId: challenge.body.id, signature: await account.signMessage({ message: challenge.body.message }) },
  });
}

describe("GET /v1/go-live and certify", () => {
  test("the whole walk over HTTP: a verified DISBURSEMENT wallet holding the minimum ticket completes step 5, and certify → 200 live", async () => {
    const m = await sandboxTenant(t, "Whole Walk Ltd");
    expect((await submitKyb(m.token)).status).toBe(201);
    expect((await decide(m.tenantId, { decision: "APPROVED", note: "ok" })).status).toBe(200);
    expect((await terms(m.tenantId, { reference: "MSA-1", note: "signed" })).status).toBe(201);
    expect((await goLive(apiKey(m.key))).body.nextStep).toBe("LIQUIDITY_AVAILABLE");

    // A DISBURSEMENT wallet on the product's live chain (POLYGON for the signup's POLYGON/USDC rail).
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = await t.request("POST", "/v1/wallets", {
      headers: bearer(m.token),
      body: { chain: "POLYGON", role: "DISBURSEMENT", address: account.address },
    });
    expect(wallet.status).toBe(201);
    // Funded but not yet proven: not enough.
    chain.setBalances("POLYGON", account.address, { stablecoin: 10_000_000n, native: 0n });
    expect((await goLive(apiKey(m.key))).body.nextStep).toBe("LIQUIDITY_AVAILABLE");
    const challenge = await t.request("POST", `/v1/wallets/${wallet.body.id}/challenge`, { headers: bearer(m.token) });
    expect(challenge.status).toBe(201);
    const verified = await t.request("POST", `/v1/wallets/${wallet.body.id}/verify`, {
      headers: bearer(m.token),
      body: { challengeId: challenge.body.id, signature: await account.signMessage({ message: challenge.body.message }) },
    });
    expect(verified.status).toBe(200);
    // Proven, but holding less than the minimum ticket (10.00): still step 5.
    chain.setBalances("POLYGON", account.address, { stablecoin: 9_990_000n, native: 0n });
    let res = await goLive(apiKey(m.key));
    expect(res.body.nextStep).toBe("LIQUIDITY_AVAILABLE");
    chain.setBalances("POLYGON", account.address, { stablecoin: 10_000_000n, native: 0n });
    res = await goLive(apiKey(m.key));
    expect(res.body.steps[4]).toMatchObject({ key: "LIQUIDITY_AVAILABLE", status: "DONE", completedAt: verified.body.verifiedAt });
    expect(res.body.nextStep).toBe("WEBHOOK_CONFIGURED");

    expect(
      (await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/walk", events: ["*"] }, headers: apiKey(m.key) })).status,
    ).toBe(201);
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    await repayInSandbox(t, m.key, borrower, loan.id);
    res = await goLive(bearer(m.token));
    expect(statuses(res.body)).toEqual(GO_LIVE_STEP_KEYS.map(() => "DONE"));
    expect(res.body.nextStep).toBeNull();

    // A sandbox clock moved ahead stays the sandbox's: certification keeps it (live loans run on the system clock).
    expect((await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 86_400 }, headers: apiKey(m.key) })).status).toBe(200);
    const certified = await certify(m.token);
    expect(certified.status).toBe(200);
    expect(certified.body).toEqual({ mode: "live", certifiedAt: expect.any(String) });
    const [row] = await t.db.select({ offset: tenants.clockOffsetMs }).from(tenants).where(eq(tenants.id, m.tenantId));
    expect(row!.offset).toBe(86_400_000);
    expect((await goLive(apiKey(m.key))).body).toMatchObject({ mode: "live", certifiedAt: certified.body.certifiedAt });
  });

  test("step 5 weighs a wallet against the products of its own chain: a BASE wallet holding 20.00 does not cover a BASE product of minimum 500.00 because a POLYGON product's minimum is 10.00", async () => {
    const m = await sandboxTenant(t, "Two Rails Ltd");
    expect((await submitKyb(m.token)).status).toBe(201);
    expect((await decide(m.tenantId, { decision: "APPROVED", note: "ok" })).status).toBe(200);
    expect((await terms(m.tenantId, { reference: "MSA-2", note: "signed" })).status).toBe(201);
    const base = { ...MERCHANT_CONFIG_EXAMPLE, network: "BASE", minTicket: "500.00" };
    expect((await t.request("POST", "/v1/merchant-configs", { body: base, headers: bearer(m.token) })).status).toBe(201);
    const account = privateKeyToAccount(generatePrivateKey());
    const verified = await verifiedDisbursement(m.token, "BASE", account);
    expect(verified.status).toBe(200);
    // 20.00 on BASE: above the signup's POLYGON product's 10.00, below the BASE product's 500.00, and no POLYGON wallet.
    chain.setBalances("BASE", account.address, { stablecoin: 20_000_000n, native: 0n });
    let res = await goLive(apiKey(m.key));
    expect(res.body.steps[4]).toMatchObject({ key: "LIQUIDITY_AVAILABLE", status: "PENDING" });
    expect(res.body.nextStep).toBe("LIQUIDITY_AVAILABLE");
    chain.setBalances("BASE", account.address, { stablecoin: 500_000_000n, native: 0n });
    res = await goLive(apiKey(m.key));
    expect(res.body.steps[4]).toMatchObject({ key: "LIQUIDITY_AVAILABLE", status: "DONE", completedAt: verified.body.verifiedAt });
  });

  test("a new tenant: step 1 PENDING, steps 2–10 BLOCKED, no audit; certify → 409 naming KYB_APPROVED", async () => {
    const m = await sandboxTenant(t, "Fresh Co");
    for (const headers of [apiKey(m.key), bearer(m.token)]) {
      const res = await goLive(headers);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ mode: "sandbox", certifiedAt: null, nextStep: "KYB_APPROVED", audit: [] });
      expect(res.body.steps.map((s: any) => s.key)).toEqual([...GO_LIVE_STEP_KEYS]);
      expect(res.body.steps.map((s: any) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(statuses(res.body)).toEqual(expected(0));
      expect(res.body.steps[0]).toMatchObject({ title: expect.any(String), completedAt: null, detail: expect.stringContaining("POST /v1/go-live/kyb") });
      expect(res.body.steps[1].detail).toBe("Blocked until step 1 (KYB_APPROVED) is done.");
    }
    const refused = await certify(m.token);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ statusCode: 409, error: "Conflict", message: expect.stringContaining("KYB_APPROVED") });
  });

  test("the walk: KYB approved, terms recorded, the signup's policy and product DONE; step 5 holds certify at 409 while the tenant has no wallet", async () => {
    const m = await sandboxTenant(t, "Walker Inc");
    const submitted = await submitKyb(m.token);
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({
      id: expect.any(String),
      status: "SUBMITTED",
      legalName: "Acme Pay Ltd",
      country: "DE",
      documents: [{ kind: "certificate_of_incorporation", fileName: "incorporation.pdf", sha256: SHA }],
      submittedAt: expect.any(String),
    });
    let res = await goLive(apiKey(m.key));
    expect(statuses(res.body)).toEqual(expected(0));
    expect(res.body.steps[0].detail).toContain("wait for the platform operator");

    const approved = await decide(m.tenantId, { decision: "APPROVED", note: "Registry extract checked" });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ action: "KYB_DECIDED", decision: "APPROVED", note: "Registry extract checked", actor: "operator" });
    res = await goLive(apiKey(m.key));
    expect(statuses(res.body)).toEqual(expected(1));
    expect(res.body.nextStep).toBe("COMMERCIAL_TERMS_AGREED");
    expect(res.body.steps[0].completedAt).toBe(approved.body.at);
    expect((await certify(m.token)).body.message).toContain("COMMERCIAL_TERMS_AGREED");

    const recorded = await terms(m.tenantId, { reference: "MSA-2026-014", note: "Signed by both parties" });
    expect(recorded.status).toBe(201);
    res = await goLive(bearer(m.token));
    // Signup made policy version 1 and an active product: steps 3 and 4 are DONE at once.
    expect(statuses(res.body)).toEqual(expected(4));
    expect(res.body.nextStep).toBe("LIQUIDITY_AVAILABLE");
    expect(res.body.steps[4].detail).toBe(
      "Add a live DISBURSEMENT wallet on the chain of an active loan product, prove you control it and fund it with at least that product's minimum ticket in stablecoin.",
    );
    expect(res.body.steps.slice(0, 4).every((s: any) => typeof s.completedAt === "string")).toBe(true);
    // Who decided what and when, oldest first.
    expect(res.body.audit).toEqual([
      { id: expect.any(String), action: "KYB_DECIDED", decision: "APPROVED", note: "Registry extract checked", actor: "operator", at: approved.body.at },
      {
        id: expect.any(String),
        action: "COMMERCIAL_TERMS_RECORDED",
        decision: "MSA-2026-014",
        note: "Signed by both parties",
        actor: "operator",
        at: recorded.body.at,
      },
    ]);
    const refused = await certify(m.token);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/^Go-live step 5 \(LIQUIDITY_AVAILABLE\) is not done: /);

    // Steps 6–10 from the tenant's real state, read through the same facts with the wallets slice's seam filled in.
    const deps = { db: t.db, liveLiquidity: walletHolding(10n ** 12n) };
    const walked = async () => (await goLiveStatus(deps, { tenantId: m.tenantId })).nextStep;
    expect(await walked()).toBe("WEBHOOK_CONFIGURED");
    expect(
      (await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/go-live", events: ["*"] }, headers: apiKey(m.key) })).status,
    ).toBe(201);
    // Signup's owner, branding (company name) and the fixture's API key exist: the next missing fact is the sandbox cycle.
    expect(await walked()).toBe("SANDBOX_CYCLE_COMPLETED");
    const borrower = privateKeyToAccount(generatePrivateKey());
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: borrower.address });
    expect(loan).toMatchObject({ status: "ACTIVE" });
    // Funded but not repaid: not a cycle yet.
    expect(await walked()).toBe("SANDBOX_CYCLE_COMPLETED");
    await repayInSandbox(t, m.key, borrower, loan.id);
    expect((await t.request("GET", `/v1/loans/${loan.id}`, { headers: apiKey(m.key) })).body.status).toBe("REPAID");
    const all = await goLiveStatus(deps, { tenantId: m.tenantId });
    expect(all.nextStep).toBeNull();
    expect(all.steps.every((s) => s.status === "DONE" && s.completedAt instanceof Date)).toBe(true);

    // This tenant has no wallet: still 409 on step 5, every later fact present.
    const facts = await loadGoLiveFacts({ db: t.db }, { tenantId: m.tenantId });
    expect(facts.liquidity).toBeNull();
    for (const fact of [facts.webhookAt, facts.apiKeyAt, facts.ownerAt, facts.brandingAt, facts.sandboxCycleAt]) expect(fact).toBeInstanceOf(Date);
    expect(statuses((await goLive(apiKey(m.key))).body)).toEqual(expected(4));
    expect((await certify(m.token)).body.message).toContain("LIQUIDITY_AVAILABLE");

    // A balance below the product's minimum ticket is not enough.
    await expect(certifyTenant({ db: t.db, liveLiquidity: walletHolding(1n) }, { tenantId: m.tenantId, now: new Date() })).rejects.toThrow(
      /LIQUIDITY_AVAILABLE/,
    );
    // The only webhook endpoint deleted between the check and the write (the liquidity reader runs between them):
    // 409 naming the step, not certified; with an endpoint again it certifies.
    const racing = {
      db: t.db,
      liveLiquidity: async (input: { tenantId: string }) => {
        await t.db.update(webhookEndpoints).set({ deletedAt: new Date() }).where(eq(webhookEndpoints.tenantId, m.tenantId));
        return walletHolding(10n ** 12n)(input);
      },
    };
    await expect(certifyTenant(racing, { tenantId: m.tenantId, now: new Date() })).rejects.toThrow(/WEBHOOK_CONFIGURED/);
    expect((await t.db.select({ at: tenants.certifiedAt }).from(tenants).where(eq(tenants.id, m.tenantId)))[0]!.at).toBeNull();
    expect(
      (await t.request("POST", "/v1/webhooks", { body: { url: "https://hooks.merchant.example/go-live-2", events: ["*"] }, headers: apiKey(m.key) })).status,
    ).toBe(201);
    // The DISBURSEMENT wallet step 5 counted deleted between the check and the write: 409 naming step 5, not certified
    // (an audit certified 5 of 5 times while deleting the only wallet).
    const account = privateKeyToAccount(generatePrivateKey());
    const proven = await verifiedDisbursement(m.token, "POLYGON", account);
    expect(proven.status).toBe(200);
    chain.setBalances("POLYGON", account.address, { stablecoin: 10n ** 12n, native: 0n });
    const reader = liveLiquidityFromWallets({ db: t.db, chain });
    const deleting = {
      db: t.db,
      liveLiquidity: async (input: { tenantId: string }) => {
        const fact = await reader(input);
        await t.db.update(wallets).set({ deletedAt: new Date() }).where(eq(wallets.id, proven.body.id));
        return fact;
      },
    };
    await expect(certifyTenant(deleting, { tenantId: m.tenantId, now: new Date() })).rejects.toThrow(/LIQUIDITY_AVAILABLE/);
    expect((await t.db.select({ at: tenants.certifiedAt }).from(tenants).where(eq(tenants.id, m.tenantId)))[0]!.at).toBeNull();
    expect((await verifiedDisbursement(m.token, "POLYGON", privateKeyToAccount(generatePrivateKey()))).status).toBe(200);
    // With the seam filled (and a verified DISBURSEMENT wallet again): certified once; the second time answers the first certifiedAt.
    const first = await certifyTenant(deps, { tenantId: m.tenantId, now: new Date("2026-11-22T10:00:00Z") });
    expect(first).toEqual({ mode: "live", certifiedAt: new Date("2026-11-22T10:00:00Z") });
    const again = await certify(m.token);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ mode: "live", certifiedAt: "2026-11-22T10:00:00.000Z" });
    expect((await goLive(bearer(m.token))).body).toMatchObject({ mode: "live", certifiedAt: "2026-11-22T10:00:00.000Z" });
  });

  test("certify: OWNER only (ADMIN and MEMBER 403, an API key 401)", async () => {
    const m = await sandboxTenant(t, "Roles Ltd");
    const admin = await addUserWithRole(t, m.token, "ADMIN");
    const member = await addUserWithRole(t, m.token, "MEMBER");
    expect(await certify(admin.token)).toMatchObject({ status: 403, body: { statusCode: 403, error: "Forbidden" } });
    expect(await certify(member.token)).toMatchObject({ status: 403, body: { statusCode: 403, error: "Forbidden" } });
    expect((await t.request("POST", "/v1/go-live/certify", { headers: apiKey(m.key) })).status).toBe(401);
    expect((await certify(m.token)).status).toBe(409);
  });
});

describe("POST /v1/go-live/kyb", () => {
  test("OWNER and ADMIN submit (201); MEMBER 403; an API key 401; approved KYB cannot be resubmitted (409)", async () => {
    const m = await sandboxTenant(t, "Kyb Roles");
    const admin = await addUserWithRole(t, m.token, "ADMIN");
    const member = await addUserWithRole(t, m.token, "MEMBER");
    expect(await submitKyb(member.token)).toMatchObject({ status: 403, body: { statusCode: 403, error: "Forbidden" } });
    expect((await t.request("POST", "/v1/go-live/kyb", { body: KYB, headers: apiKey(m.key) })).status).toBe(401);
    expect((await submitKyb(admin.token)).status).toBe(201);
    // A correction while SUBMITTED supersedes; the operator decides the newest.
    expect((await submitKyb(m.token, { ...KYB, legalName: "Acme Pay Limited" })).status).toBe(201);
    expect((await decide(m.tenantId, { decision: "APPROVED" })).status).toBe(200);
    const list = await t.request("GET", "/v1/operator/tenants?limit=100", { headers: OPERATOR });
    expect(list.body.data.find((x: any) => x.id === m.tenantId)).toMatchObject({
      kybStatus: "APPROVED",
      kyb: { legalName: "Acme Pay Limited" },
      certifiedAt: null,
      liveEnabledAt: null,
    });
    // A tenant that never submitted: kyb null (which the document's schema accepts: openapi-lint.test.ts).
    const fresh = await sandboxTenant(t, "No Kyb Yet");
    const again = await t.request("GET", "/v1/operator/tenants?limit=100", { headers: OPERATOR });
    expect(again.body.data.find((x: any) => x.id === fresh.tenantId)).toMatchObject({ kybStatus: null, kyb: null });
    expect(await submitKyb(m.token)).toMatchObject({ status: 409, body: { statusCode: 409, error: "Conflict" } });
  });

  test("validation: country ISO 3166-1 alpha-2, sha256 64 hex, at least one document, sane lengths; each a 400 naming its field", async () => {
    const m = await sandboxTenant(t, "Kyb Validation");
    const doc = KYB.documents[0]!;
    const cases: [unknown, string][] = [
      [{ ...KYB, country: "XX" }, "country"],
      [{ ...KYB, country: "DEU" }, "country"],
      [{ ...KYB, country: 49 }, "country"],
      [{ ...KYB, documents: [] }, "documents"],
      [{ ...KYB, documents: [{ ...doc, sha256: SHA.slice(1) }] }, "documents.0.sha256"],
      [{ ...KYB, documents: [{ ...doc, sha256: `${SHA.slice(1)}g` }] }, "documents.0.sha256"],
      [{ ...KYB, documents: [{ ...doc, fileName: "" }] }, "documents.0.fileName"],
      [{ ...KYB, documents: Array.from({ length: 21 }, () => doc) }, "documents"],
      [{ ...KYB, legalName: "x".repeat(201) }, "legalName"],
      [{ ...KYB, legalName: "   " }, "legalName"],
      [{ ...KYB, legalName: "Acme\u0000Pay" }, "legalName"],
      [{ ...KYB, registrationNumber: "1".repeat(65) }, "registrationNumber"],
      [{ legalName: "Acme" }, "registrationNumber"],
    ];
    for (const [body, field] of cases) {
      const res = await submitKyb(m.token, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
      expect(
        res.body.message.some((msg: string) => msg.startsWith(`${field}: `)),
        `${field} in ${JSON.stringify(res.body.message)}`,
      ).toBe(true);
    }
    expect((await goLive(apiKey(m.key))).body.steps[0].detail).toContain("Submit your business verification");
  });
});

describe("the platform operator", () => {
  test("POST /v1/operator/tenants/:id/signers: the key must derive the address, is sealed and never shown, and the tenant sees the audit entry", async () => {
    const m = await sandboxTenant(t, "Signer Co");
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const install = (body: unknown, headers: Record<string, string> = OPERATOR, tenantId = m.tenantId) =>
      t.request("POST", `/v1/operator/tenants/${tenantId}/signers`, { body, headers });

    const wrong = await install({ chain: "POLYGON", address: account.address, privateKey: generatePrivateKey() });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message[0]).toStartWith("privateKey:");
    expect(JSON.stringify(wrong.body)).not.toContain(key.slice(2));
    expect((await install({ chain: "POLYGON", address: account.address, privateKey: key }, bearer(m.token))).status).toBe(401);
    expect((await install({ chain: "POLYGON", address: account.address, privateKey: key }, OPERATOR, crypto.randomUUID())).status).toBe(404);

    const installed = await install({ chain: "POLYGON", address: account.address.toLowerCase(), privateKey: key });
    expect(installed.status).toBe(201);
    expect(installed.body).toEqual({ id: expect.any(String), chain: "POLYGON", address: account.address });
    const status = await goLive(bearer(m.token));
    expect(status.body.audit).toContainEqual({
      id: expect.any(String),
      action: "SIGNER_INSTALLED",
      decision: `POLYGON ${account.address}`,
      note: null,
      actor: "operator",
      at: expect.any(String),
    });
    for (const body of [installed.body, status.body]) {
      expect(JSON.stringify(body).toLowerCase()).not.toContain(key.slice(2).toLowerCase());
    }
  });

  test("a wrong or missing key, a merchant JWT or API key: 401; an unknown tenant 404", async () => {
    const m = await sandboxTenant(t, "Op Auth");
    expect((await submitKyb(m.token)).status).toBe(201);
    const refusedCredentials: Record<string, string>[] = [{}, { [OPERATOR_KEY_HEADER]: "svc_operator_wrong" }, bearer(m.token), apiKey(m.key)];
    for (const headers of refusedCredentials) {
      for (const res of [
        await t.request("GET", "/v1/operator/tenants", { headers }),
        await decide(m.tenantId, { decision: "APPROVED" }, headers),
        await terms(m.tenantId, { reference: "X" }, headers),
      ]) {
        expect(res).toMatchObject({ status: 401, body: { statusCode: 401, error: "Unauthorized" } });
      }
    }
    const unknown = crypto.randomUUID();
    expect(await decide(unknown, { decision: "APPROVED" })).toMatchObject({ status: 404, body: { statusCode: 404, error: "Not Found" } });
    expect((await terms(unknown, { reference: "X" })).status).toBe(404);
    // Nothing was decided or recorded by the refused calls.
    expect((await goLive(apiKey(m.key))).body.audit).toEqual([]);
  });

  test("KYB decisions need a SUBMITTED KYB (409); a rejection is audited and the tenant resubmits", async () => {
    const m = await sandboxTenant(t, "Op Decide");
    expect(await decide(m.tenantId, { decision: "APPROVED" })).toMatchObject({ status: 409, body: { message: "The tenant has not submitted KYB" } });
    expect((await submitKyb(m.token)).status).toBe(201);
    const rejected = await decide(m.tenantId, { decision: "REJECTED", note: "Registration number does not match the registry" });
    expect(rejected.status).toBe(200);
    expect(await decide(m.tenantId, { decision: "APPROVED" })).toMatchObject({ status: 409, body: { message: "The tenant's KYB is REJECTED, not SUBMITTED" } });
    const after = (await goLive(bearer(m.token))).body;
    expect(after.steps[0]).toMatchObject({ status: "PENDING", detail: expect.stringContaining("rejected") });
    expect(after.audit).toEqual([
      {
        id: rejected.body.id,
        action: "KYB_DECIDED",
        decision: "REJECTED",
        note: "Registration number does not match the registry",
        actor: "operator",
        at: rejected.body.at,
      },
    ]);
    expect((await submitKyb(m.token)).status).toBe(201);
    expect((await decide(m.tenantId, { decision: "APPROVED", note: null })).status).toBe(200);
    expect((await goLive(apiKey(m.key))).body.nextStep).toBe("COMMERCIAL_TERMS_AGREED");
    expect(await decide(m.tenantId, { decision: "MAYBE" })).toMatchObject({ status: 400 });
    expect(await terms(m.tenantId, { reference: "" })).toMatchObject({ status: 400 });
  });

  test("a decision names the submission reviewed (kybId): a resubmission made meanwhile is not decided in its place, 409 and no audit (an audit approved 'Shell Co' while reviewing 'Honest Ltd')", async () => {
    const m = await sandboxTenant(t, "Op Bound");
    expect((await submitKyb(m.token, { ...KYB, legalName: "Honest Ltd" })).status).toBe(201);
    const listed = (await t.request("GET", "/v1/operator/tenants", { headers: OPERATOR })).body.data.find((x: { id: string }) => x.id === m.tenantId);
    const reviewed = listed.kyb.id as string;
    expect(listed.kyb.legalName).toBe("Honest Ltd");
    expect((await submitKyb(m.token, { ...KYB, legalName: "Shell Co Ltd" })).status).toBe(201);
    const refused = await decide(m.tenantId, { decision: "APPROVED", note: "checked Honest Ltd", kybId: reviewed });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain(reviewed);
    const after = (await goLive(bearer(m.token))).body;
    expect(after.audit).toEqual([]);
    expect(after.steps[0].status).toBe("PENDING");
    // The newest one, named, is decided; a malformed id is a 400.
    const newest = (await t.request("GET", "/v1/operator/tenants", { headers: OPERATOR })).body.data.find((x: { id: string }) => x.id === m.tenantId).kyb;
    expect(newest.legalName).toBe("Shell Co Ltd");
    expect((await decide(m.tenantId, { decision: "REJECTED", note: "shell company", kybId: "not-an-id" })).status).toBe(400);
    expect((await decide(m.tenantId, { decision: "REJECTED", note: "shell company", kybId: newest.id })).status).toBe(200);
  });

  test("a decision that lost the race (the KYB was decided between its read and its write): 409, no audit entry, the first decision stands", async () => {
    const m = await sandboxTenant(t, "Op Race");
    expect((await submitKyb(m.token)).status).toBe(201);
    const input = { tenantId: m.tenantId, note: null, actor: "operator", now: new Date() };
    // A database whose batch first lets a competing decision commit, as a second request would.
    const racingDb = firstBatchAfter(() => decideKyb({ db: t.db }, { ...input, decision: "REJECTED" }));
    await expect(decideKyb({ db: racingDb }, { ...input, decision: "APPROVED" })).rejects.toThrow("decided meanwhile");
    const after = (await goLive(apiKey(m.key))).body;
    expect(after.audit).toEqual([expect.objectContaining({ action: "KYB_DECIDED", decision: "REJECTED" })]);
    expect(after.steps[0]).toMatchObject({ status: "PENDING", detail: expect.stringContaining("rejected") });
  });

  test("the operator's list names other tenants' KYB sharing a registration number or a document: evidence copied from an approved tenant is flagged, not just listed", async () => {
    const original = await sandboxTenant(t, "Op Original");
    const kyb = {
      ...KYB,
      registrationNumber: `RN-${crypto.randomUUID()}`,
      documents: [{ kind: "certificate_of_incorporation", fileName: "a.pdf", sha256: "a".repeat(64) }],
    };
    expect((await submitKyb(original.token, kyb)).status).toBe(201);
    expect((await decide(original.tenantId, { decision: "APPROVED", note: "checked" })).status).toBe(200);
    const copier = await sandboxTenant(t, "Op Copier");
    expect((await submitKyb(copier.token, { ...kyb, legalName: "Copier Ltd" })).status).toBe(201);
    const docOnly = await sandboxTenant(t, "Op Doc Only");
    expect((await submitKyb(docOnly.token, { ...kyb, registrationNumber: `RN-${crypto.randomUUID()}` })).status).toBe(201);
    // The same number in other case and spacing is the same registration.
    const respaced = await sandboxTenant(t, "Op Respaced");
    const respacedKyb = {
      ...kyb,
      registrationNumber: kyb.registrationNumber.toLowerCase().replace("-", " -"),
      documents: [{ kind: "certificate_of_incorporation", fileName: "c.pdf", sha256: "c".repeat(64) }],
    };
    expect((await submitKyb(respaced.token, respacedKyb)).status).toBe(201);
    const honest = await sandboxTenant(t, "Op Honest");
    expect(
      (
        await submitKyb(honest.token, {
          ...KYB,
          registrationNumber: `RN-${crypto.randomUUID()}`,
          documents: [{ kind: "certificate_of_incorporation", fileName: "b.pdf", sha256: "b".repeat(64) }],
        })
      ).status,
    ).toBe(201);
    const list = (await t.request("GET", "/v1/operator/tenants?limit=100", { headers: OPERATOR })).body.data as { id: string; kybMatches: unknown[] }[];
    const of = (id: string) => list.find((x) => x.id === id)!.kybMatches;
    expect(of(copier.tenantId)).toEqual(
      expect.arrayContaining([
        { tenantId: original.tenantId, kybId: expect.any(String), status: "APPROVED", matched: ["registrationNumber", `document:${"a".repeat(64)}`] },
      ]),
    );
    expect(of(docOnly.tenantId)).toEqual(
      expect.arrayContaining([expect.objectContaining({ tenantId: original.tenantId, matched: [`document:${"a".repeat(64)}`] })]),
    );
    expect(
      of(original.tenantId)
        .map((x) => (x as { tenantId: string }).tenantId)
        .sort(),
    ).toEqual([copier.tenantId, docOnly.tenantId, respaced.tenantId].sort());
    expect(of(respaced.tenantId)).toEqual(expect.arrayContaining([expect.objectContaining({ tenantId: original.tenantId, matched: ["registrationNumber"] })]));
    expect(of(honest.tenantId)).toEqual([]);
  });

  test("an approval racing a resubmission: the decision lands on the newest submission or not at all, never both", async () => {
    // The resubmission commits between the approval's read and its write: the approval is refused.
    const m = await sandboxTenant(t, "Op Resubmit Race");
    expect((await submitKyb(m.token)).status).toBe(201);
    const input = { tenantId: m.tenantId, note: null, actor: "operator", now: new Date() };
    const racingDb = firstBatchAfter(async () => expect((await submitKyb(m.token, { ...KYB, legalName: "Other Corp" })).status).toBe(201));
    await expect(decideKyb({ db: racingDb }, { ...input, decision: "APPROVED" })).rejects.toThrow("or resubmitted");
    const after = (await goLive(apiKey(m.key))).body;
    expect(after.audit).toEqual([]);
    expect(after.steps[0].status).toBe("PENDING");
    const listed = (await t.request("GET", "/v1/operator/tenants", { headers: OPERATOR })).body.data.find((x: { id: string }) => x.id === m.tenantId);
    expect(listed.kyb).toMatchObject({ legalName: "Other Corp", status: "SUBMITTED" });

    // The approval commits between the resubmission's read and its insert: the resubmission is refused (409).
    const n = await sandboxTenant(t, "Op Approve Race");
    expect((await submitKyb(n.token)).status).toBe(201);
    const approveFirst = new Proxy(t.db, {
      get(target, prop, receiver) {
        if (prop !== "insert") return Reflect.get(target, prop, receiver);
        return (table: unknown) => {
          const insert = (target.insert as (x: unknown) => { select: (q: unknown) => { returning: (r: unknown) => Promise<unknown[]> } })(table);
          return {
            select: (q: unknown) => ({
              returning: async (r: unknown) => {
                await decideKyb({ db: t.db }, { ...input, tenantId: n.tenantId, decision: "APPROVED" });
                return insert.select(q).returning(r);
              },
            }),
          };
        };
      },
    });
    const kyb = { ...KYB, legalName: "Late Corp" } as Parameters<typeof submitKybVerb>[1]["kyb"];
    await expect(submitKybVerb({ db: approveFirst }, { tenantId: n.tenantId, submittedBy: "owner", kyb, now: new Date() })).rejects.toThrow("already approved");
    const approved = (await goLive(apiKey(n.key))).body;
    expect(approved.steps[0].status).toBe("DONE");
  });

  test("the audit is immutable: the database refuses UPDATE and DELETE", async () => {
    const m = await sandboxTenant(t, "Op Immutable");
    expect((await terms(m.tenantId, { reference: "MSA-1" })).status).toBe(201);
    const refused = async (write: PromiseLike<unknown>) => {
      try {
        await write;
        return "accepted";
      } catch (err) {
        return `${err} ${(err as { cause?: unknown }).cause}`;
      }
    };
    expect(await refused(t.db.update(operatorAudit).set({ note: "rewritten" }).where(eq(operatorAudit.tenantId, m.tenantId)))).toContain("immutable");
    expect(await refused(t.db.delete(operatorAudit).where(eq(operatorAudit.tenantId, m.tenantId)))).toContain("immutable");
    expect(await refused(t.db.run(sql`DELETE FROM commercial_terms WHERE tenant_id = ${m.tenantId}`))).toContain("immutable");
    expect((await goLive(apiKey(m.key))).body.audit).toMatchObject([{ decision: "MSA-1", note: null }]);
  });

  test("another tenant's go-live shows none of this tenant's audit", async () => {
    const a = await sandboxTenant(t, "Op Tenant A");
    const b = await sandboxTenant(t, "Op Tenant B");
    expect((await terms(a.tenantId, { reference: "A-only" })).status).toBe(201);
    expect((await goLive(apiKey(b.key))).body.audit).toEqual([]);
    expect((await goLive(apiKey(a.key))).body.audit).toHaveLength(1);
  });

  test("without a configured key (outside development) nothing is accepted, not even the default", async () => {
    const saved = t.deps.operatorKey;
    t.deps.operatorKey = null;
    try {
      expect((await t.request("GET", "/v1/operator/tenants", { headers: OPERATOR })).status).toBe(401);
    } finally {
      t.deps.operatorKey = saved;
    }
    expect((await t.request("GET", "/v1/operator/tenants", { headers: OPERATOR })).status).toBe(200);
  });
});

describe("operator rate limits", () => {
  test("failed operator keys spend the client IP's failed-auth budget: then 429, even with the right key", async () => {
    const own = await createTestApp({ authFailureLimit: 2 });
    try {
      const ip = { "cf-connecting-ip": "203.0.113.9" };
      const wrong = { ...ip, [OPERATOR_KEY_HEADER]: "svc_operator_guess" };
      expect((await own.request("GET", "/v1/operator/tenants", { headers: wrong })).status).toBe(401);
      expect((await own.request("GET", "/v1/operator/tenants", { headers: wrong })).status).toBe(401);
      const blocked = await own.request("GET", "/v1/operator/tenants", { headers: wrong });
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await own.request("GET", "/v1/operator/tenants", { headers: { ...ip, ...OPERATOR } })).status).toBe(429);
      // Another IP is unaffected.
      expect((await own.request("GET", "/v1/operator/tenants", { headers: { "cf-connecting-ip": "203.0.113.10", ...OPERATOR } })).status).toBe(200);
    } finally {
      own.close();
    }
  });

  test("every operator request spends the client IP's request budget", async () => {
    const own = await createTestApp({ ipLimit: 2 });
    try {
      const headers = { "cf-connecting-ip": "198.51.100.7", ...OPERATOR };
      expect((await own.request("GET", "/v1/operator/tenants", { headers })).status).toBe(200);
      expect((await own.request("GET", "/v1/operator/tenants", { headers })).status).toBe(200);
      expect((await own.request("GET", "/v1/operator/tenants", { headers })).status).toBe(429);
    } finally {
      own.close();
    }
  });
});
