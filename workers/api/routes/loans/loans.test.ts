import { CHAIN_CONFIG } from "../../../../shared/chains/chain-config.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { events } from "../../../../db/schema/events.ts";
import { liquidityPools } from "../../../../db/schema/liquidity-pools.ts";
import { agreements, settlements } from "../../../../db/schema/loan-records.ts";
import { loans } from "../../../../db/schema/loans.ts";
import { tenantSettings } from "../../../../db/schema/tenant-settings.ts";
import { tenants } from "../../../../db/schema/tenants.ts";
import { policies } from "../../../../db/schema/policies.ts";
import { newId } from "../../../../shared/domain/ids.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { addUserWithRole, bearer, createKey, signUpTenant } from "../../../../shared/testing/fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Merchant = { key: string; token: string; tenantId: string; productId: string };

async function merchant(): Promise<Merchant> {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const me = await t.request("GET", "/v1/me", { headers: { "x-api-key": key } });
  return { key, token: owner.token, tenantId: owner.tenantId, productId: me.body.merchantConfigs[0].loanProductId };
}

const wallet = () => privateKeyToAccount(generatePrivateKey());
let keyCounter = 0;
const loanBody = (m: Merchant, over: Record<string, unknown> = {}) => ({
  loanProductId: m.productId,
  borrowerRef: "borrower-1",
  borrowerWalletAddress: wallet().address,
  chain: "POLYGON_AMOY",
  principalAmount: "100.00",
  idempotencyKey: `key-${++keyCounter}`,
  ...over,
});
const post = (m: Merchant, body: unknown) => t.request("POST", "/v1/loans", { body, headers: { "x-api-key": m.key } });
const eventTypes = async (loanId: string) =>
  (await t.db.select({ type: events.type }).from(events).where(eq(events.loanId, loanId)).orderBy(events.seq)).map((e) => e.type);
const setPolicy = (m: Merchant, p: Partial<typeof policies.$inferInsert>) =>
  t.db.insert(policies).values({
    id: newId(),
    tenantId: m.tenantId,
    version: 2,
    requireKycVerified: false,
    manualReviewAbove: null,
    maxOpenLoansPerBorrower: null,
    blockedWallets: [],
    createdBy: "test",
    createdAt: new Date(),
    ...p,
  });

describe("POST /v1/loans", () => {
  test("approved and funded: fields of DECISIONS.md, money to the cent, events in order", async () => {
    const m = await merchant();
    const body = loanBody(m, { tenureDays: 7, principalAmount: "250.55" });
    const res = await post(m, body);
    expect(res.status).toBe(201);
    const loan = res.body;
    expect(loan).toMatchObject({
      status: "ACTIVE",
      derivedStatus: "ACTIVE",
      loanProductId: m.productId,
      borrowerRef: "borrower-1",
      borrowerWalletAddress: body.borrowerWalletAddress,
      chain: "POLYGON_AMOY",
      stablecoin: "USDC",
      principalAmount: "250.55",
      processingFee: "5.01", // 2% of 250.55 = 5.011 → 5.01
      lateFee: "0.00",
      dailyLateFee: "1.00",
      totalDue: "255.56",
      tenureDays: 7,
      gracePeriodDays: 3,
      fundingState: "FUNDED",
      idempotencyKey: body.idempotencyKey,
      program: null,
      channel: null,
    });
    expect(loan.decision).toMatchObject({ outcome: "APPROVED", reasons: [], policyVersion: 1 });
    expect(Date.parse(loan.dueAt) - Date.parse(loan.fundedAt)).toBe(7 * 86_400_000);
    expect(loan.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await eventTypes(loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    const [pool] = await t.db.select().from(liquidityPools).where(eq(liquidityPools.tenantId, m.tenantId));
    expect(pool!.available).toBe(100_000_000_000n - 250_550_000n);
    expect(pool!.reserved).toBe(0n);
    const rows = await t.db.select().from(settlements).where(eq(settlements.loanId, loan.id));
    expect(rows).toEqual([expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: 250_550_000n, txHash: loan.fundingTxHash })]);
    const got = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": m.key } });
    // GET shows the loan as created, plus its agreement (none for an API loan without the KYC gate).
    expect(got.body).toEqual({ ...loan, agreement: null });
  });

  test("the envelope of every event carries the loan as the API shows it", async () => {
    const m = await merchant();
    const loan = (await post(m, loanBody(m))).body;
    const rows = await t.db.select().from(events).where(eq(events.loanId, loan.id)).orderBy(events.seq);
    for (const row of rows) {
      expect(row.envelope).toMatchObject({ id: row.id, type: row.type, tenantId: m.tenantId, program: null, channel: null });
      expect(row.envelope.data.loan).toMatchObject({ id: loan.id, idempotencyKey: loan.idempotencyKey });
    }
    expect((rows[0]!.envelope.data.loan as { status: string; decision: unknown }).decision).toBeNull();
    expect((rows[2]!.envelope.data.loan as { status: string }).status).toBe("ACTIVE");
  });

  test("the address is stored in its canonical form", async () => {
    const m = await merchant();
    const account = wallet();
    const res = await post(m, loanBody(m, { borrowerWalletAddress: account.address.toLowerCase() }));
    expect(res.status).toBe(201);
    expect(res.body.borrowerWalletAddress).toBe(account.address);
  });

  test("tenure defaults to the product's shortest", async () => {
    const m = await merchant();
    const { tenureDays, principalAmount, ...rest } = loanBody(m) as Record<string, unknown>;
    const res = await post(m, { ...rest, principalAmount: "10.00" });
    expect(res.body.tenureDays).toBe(3);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ["a chain of another rail", { chain: "BASE_SEPOLIA" }, "chain"],
    ["an unknown chain", { chain: "ETHEREUM" }, "chain"],
    ["a bad checksum", { borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA73" }, "borrowerWalletAddress"],
    ["the zero address (what is sent there is burned)", { borrowerWalletAddress: "0x0000000000000000000000000000000000000000" }, "borrowerWalletAddress"],
    ["the chain's USDC token contract", { borrowerWalletAddress: CHAIN_CONFIG.POLYGON_AMOY.token.address }, "borrowerWalletAddress"],
    ["the service's pool contract", { borrowerWalletAddress: CHAIN_CONFIG.POLYGON_AMOY.pool!.toLowerCase() }, "borrowerWalletAddress"],
    ["a TON address on an EVM chain", { borrowerWalletAddress: "EQDtFpEwcFAEcRe5mLVh2N6C0x-_hJEM7W61_JLnSF74p4q2" }, "borrowerWalletAddress"],
    ["an amount over the cap", { principalAmount: "1000.01" }, "principalAmount"],
    ["an amount under the minimum", { principalAmount: "9.99" }, "principalAmount"],
    ["zero", { principalAmount: "0.00" }, "principalAmount"],
    ["three decimals", { principalAmount: "10.001" }, "principalAmount"],
    ["a number", { principalAmount: 100 }, "principalAmount"],
    ["a negative amount", { principalAmount: "-5.00" }, "principalAmount"],
    ["a tenure of 5", { tenureDays: 5 }, "tenureDays"],
    ["a tenure as string", { tenureDays: "7" }, "tenureDays"],
    ["an idempotency key over 255", { idempotencyKey: "k".repeat(256) }, "idempotencyKey"],
    ["an empty borrowerRef", { borrowerRef: "" }, "borrowerRef"],
    ["a borrowerRef with a NUL", { borrowerRef: "user\u0000-42" }, "borrowerRef"],
    ["a borrowerRef with a right-to-left override", { borrowerRef: "user-\u202Egnp.exe" }, "borrowerRef"],
    ["a borrowerRef with an escape character", { borrowerRef: "user\u001b[31m" }, "borrowerRef"],
  ];
  for (const [name, over, field] of invalid) {
    test(`400 naming ${field}: ${name}`, async () => {
      const m = await merchant();
      const res = await post(m, loanBody(m, over));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Bad Request");
      expect(res.body.message).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${field}: `))]));
      expect(await t.db.select().from(loans).where(eq(loans.tenantId, m.tenantId))).toEqual([]);
    });
  }

  test("missing fields are each named", async () => {
    const m = await merchant();
    const res = await post(m, {});
    expect(res.status).toBe(400);
    const fields = (res.body.message as string[]).map((s) => s.split(":")[0]).sort();
    expect(fields).toEqual(["borrowerRef", "borrowerWalletAddress", "chain", "idempotencyKey", "loanProductId", "principalAmount"]);
  });

  test("one 400 names every bad field a check without the product can tell: amount, address and tenure together (an audit saw only the amount)", async () => {
    const m = await merchant();
    const res = await post(m, loanBody(m, { principalAmount: "abc", borrowerWalletAddress: "0x1", tenureDays: 4 }));
    expect(res.status).toBe(400);
    const fields = (res.body.message as string[]).map((s) => s.split(":")[0]).sort();
    expect(fields).toEqual(["borrowerWalletAddress", "principalAmount", "tenureDays"]);
    expect(await t.db.select().from(loans).where(eq(loans.tenantId, m.tenantId))).toEqual([]);
  });

  test("a live chain without certification: 403", async () => {
    const m = await merchant();
    const res = await post(m, loanBody(m, { chain: "POLYGON" }));
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("certification");
  });

  test("another tenant's product: 404; no key: 401", async () => {
    const a = await merchant();
    const b = await merchant();
    const res = await post(b, loanBody(b, { loanProductId: a.productId }));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, message: "Loan product not found", error: "Not Found" });
    expect((await t.request("POST", "/v1/loans", { body: loanBody(a) })).status).toBe(401);
  });
});

describe("idempotency", () => {
  test("a replay returns the original loan with 200, even with another body", async () => {
    const m = await merchant();
    const body = loanBody(m);
    const first = await post(m, body);
    const second = await post(m, { ...body, principalAmount: "500.00" });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.principalAmount).toBe("100.00");
  });

  test("25 simultaneous identical creates make one loan and one of each event", async () => {
    const m = await merchant();
    const body = loanBody(m);
    const results = await Promise.all(Array.from({ length: 25 }, () => post(m, body)));
    expect(results.every((r) => r.status < 500)).toBe(true);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const rows = await t.db.select().from(loans).where(eq(loans.tenantId, m.tenantId));
    expect(rows).toHaveLength(1);
    expect(await eventTypes(rows[0]!.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    const fundings = await t.db.select().from(settlements).where(eq(settlements.loanId, rows[0]!.id));
    expect(fundings).toHaveLength(1);
  });

  test("the same key in another tenant is another loan", async () => {
    const a = await merchant();
    const b = await merchant();
    const ra = await post(a, loanBody(a, { idempotencyKey: "shared-key" }));
    const rb = await post(b, loanBody(b, { idempotencyKey: "shared-key" }));
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(ra.body.id).not.toBe(rb.body.id);
  });
});

describe("underwriting through the API", () => {
  test("declined: stays CREATED, shown as DECLINED, no funds", async () => {
    const m = await merchant();
    await setPolicy(m, { requireKycVerified: true });
    const res = await post(m, loanBody(m));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED", fundingState: "NONE", fundedAt: null });
    expect(res.body.decision).toMatchObject({ outcome: "DECLINED", policyVersion: 2, reasons: [expect.objectContaining({ code: "KYC_NOT_VERIFIED" })] });
    expect(await eventTypes(res.body.id)).toEqual(["loan.application_submitted", "loan.decision"]);
    expect(await t.db.select().from(settlements).where(eq(settlements.loanId, res.body.id))).toEqual([]);
  });

  test("manual review: APPROVE funds it, REJECT declines it, a second review is 409, a MEMBER 403", async () => {
    const m = await merchant();
    await setPolicy(m, { manualReviewAbove: 50_000_000n });
    const a = (await post(m, loanBody(m, { principalAmount: "75.00" }))).body;
    const b = (await post(m, loanBody(m, { principalAmount: "50.01", borrowerRef: "b2" }))).body;
    expect(a.decision.outcome).toBe("MANUAL_REVIEW");
    expect(a).toMatchObject({ status: "CREATED", fundingState: "NONE" });

    const member = await addUserWithRole(t, m.token, "MEMBER");
    const denied = await t.request("POST", `/v1/loans/${a.id}/review`, { body: { action: "APPROVE" }, headers: bearer(member.token) });
    expect(denied.status).toBe(403);
    const viaKey = await t.request("POST", `/v1/loans/${a.id}/review`, { body: { action: "APPROVE" }, headers: { "x-api-key": m.key } });
    expect(viaKey.status).toBe(401);

    const approved = await t.request("POST", `/v1/loans/${a.id}/review`, { body: { action: "APPROVE", note: "documents fine" }, headers: bearer(m.token) });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    expect(approved.body.decision).toMatchObject({ outcome: "APPROVED", reviewNote: "documents fine", reviewedBy: expect.any(String) });
    expect(await eventTypes(a.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.approved", "loan.funded"]);

    const rejected = await t.request("POST", `/v1/loans/${b.id}/review`, { body: { action: "REJECT", note: null }, headers: bearer(m.token) });
    expect(rejected.body).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED", fundingState: "NONE" });
    expect(await eventTypes(b.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.rejected"]);

    for (const id of [a.id, b.id]) {
      const again = await t.request("POST", `/v1/loans/${id}/review`, { body: { action: "APPROVE" }, headers: bearer(m.token) });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe("Conflict");
    }
    const other = await merchant();
    const cross = await t.request("POST", `/v1/loans/${a.id}/review`, { body: { action: "APPROVE" }, headers: bearer(other.token) });
    expect(cross.status).toBe(404);
  });
});

describe("GET /v1/loans", () => {
  test("filters, the derived DECLINED state, pagination, isolation", async () => {
    const m = await merchant();
    const active = (await post(m, loanBody(m, { borrowerRef: "alice" }))).body;
    t.clock.advance(1); // the test clock stands still; newest-first needs distinct times
    await setPolicy(m, { requireKycVerified: true });
    const declined = (await post(m, loanBody(m, { borrowerRef: "bob" }))).body;
    const list = async (q: string) => (await t.request("GET", `/v1/loans${q}`, { headers: { "x-api-key": m.key } })).body.data.map((l: { id: string }) => l.id);
    expect(await list("")).toEqual([declined.id, active.id]);
    expect(await list("?status=DECLINED")).toEqual([declined.id]);
    expect(await list("?status=CREATED")).toEqual([]);
    expect(await list("?status=ACTIVE")).toEqual([active.id]);
    expect(await list("?borrowerRef=alice")).toEqual([active.id]);
    expect(await list("?chain=BASE_SEPOLIA")).toEqual([]);
    expect(await list(`?createdFrom=${encodeURIComponent(active.createdAt)}&createdTo=${encodeURIComponent(active.createdAt)}`)).toContain(active.id);
    const page = await t.request("GET", "/v1/loans?limit=1", { headers: { "x-api-key": m.key } });
    expect(page.body.data).toHaveLength(1);
    const next = await t.request("GET", `/v1/loans?limit=1&cursor=${page.body.nextCursor}`, { headers: { "x-api-key": m.key } });
    expect(next.body.data[0].id).toBe(active.id);
    expect(next.body.nextCursor).toBeNull();
    const bad = await t.request("GET", "/v1/loans?status=PENDING&createdFrom=yesterday", { headers: { "x-api-key": m.key } });
    expect(bad.status).toBe(400);
    expect(bad.body.message.map((s: string) => s.split(":")[0]).sort()).toEqual(["createdFrom", "status"]);
    const other = await merchant();
    expect((await t.request("GET", "/v1/loans", { headers: { "x-api-key": other.key } })).body.data).toEqual([]);
    expect((await t.request("GET", `/v1/loans/${active.id}`, { headers: { "x-api-key": other.key } })).status).toBe(404);
    expect((await t.request("GET", "/v1/loans/not-a-uuid", { headers: { "x-api-key": m.key } })).status).toBe(404);
  });
});

describe("loan-level KYC gate and agreements", () => {
  async function gated() {
    const m = await merchant();
    await t.db.update(tenantSettings).set({ requiresKycBeforeFunding: true }).where(eq(tenantSettings.tenantId, m.tenantId));
    const account = wallet();
    const loan = (await post(m, loanBody(m, { borrowerWalletAddress: account.address }))).body;
    return { m, account, loan };
  }
  const challengeFor = async (m: Merchant, loanId: string) =>
    (await t.request("POST", `/v1/loans/${loanId}/agreement-challenge`, { headers: { "x-api-key": m.key } })).body;

  test("an approved loan waits for both KYC confirmation and the agreement, then funds", async () => {
    const { m, account, loan } = await gated();
    expect(loan).toMatchObject({ status: "CREATED", fundingState: "WAITING_KYC", kycGate: { required: true, kycConfirmed: false, agreementRecorded: false } });
    expect(loan.decision.outcome).toBe("APPROVED");

    const kyc = await t.request("POST", `/v1/loans/${loan.id}/kyc-confirmation`, {
      body: { verified: true, merchantUserId: "ops-1", reference: "kyc-123" },
      headers: { "x-api-key": m.key },
    });
    expect(kyc.status).toBe(201);
    expect(kyc.body).toMatchObject({ loanId: loan.id, verified: true, merchantUserId: "ops-1", reference: "kyc-123" });
    expect(kyc.body.loan).toMatchObject({ status: "CREATED", fundingState: "WAITING_KYC", kycGate: { kycConfirmed: true, agreementRecorded: false } });

    const challenge = await challengeFor(m, loan.id);
    expect(challenge.message).toContain(account.address);
    expect(challenge.message).toContain("Amount: 100.00 USDC");
    expect(challenge.message).toContain(`Challenge: ${challenge.id}`);
    expect(Date.parse(challenge.expiresAt) - t.clock.now().getTime()).toBe(5 * 60_000);
    const signature = await account.signMessage({ message: challenge.message });
    const res = await t.request("POST", `/v1/loans/${loan.id}/agreement`, {
      body: { walletSignature: signature, agreementChallengeId: challenge.id, agreementText: "My exact terms." },
      headers: { "x-api-key": m.key },
    });
    expect(res.status).toBe(201);
    expect(res.body.agreement).toMatchObject({ loanId: loan.id, challengeId: challenge.id, walletAddress: account.address, agreementText: "My exact terms." });
    expect(res.body.loan).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });

    // A second agreement never overwrites the first.
    const again = await t.request("POST", `/v1/loans/${loan.id}/agreement`, {
      body: { walletSignature: signature, agreementChallengeId: challenge.id, agreementText: "Other terms." },
      headers: { "x-api-key": m.key },
    });
    expect(again.status).toBe(409);
    const [kept] = await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id));
    expect(kept!.agreementText).toBe("My exact terms.");
    // Immutable in the database itself: a trigger refuses any update.
    const refused = await (async () => t.db.run(sql`UPDATE agreements SET agreement_text = 'x' WHERE loan_id = ${loan.id}`))().catch((e: Error) => e);
    expect(String((refused as Error).cause ?? refused)).toContain("immutable");
  });

  test("agreement first, then KYC: funds on the KYC confirmation; the signed message is kept when no text is given", async () => {
    const { m, account, loan } = await gated();
    const challenge = await challengeFor(m, loan.id);
    const signature = await account.signMessage({ message: challenge.message });
    const res = await t.request("POST", `/v1/loans/${loan.id}/agreement`, {
      body: { walletSignature: signature, agreementChallengeId: challenge.id },
      headers: { "x-api-key": m.key },
    });
    expect(res.body.loan.fundingState).toBe("WAITING_KYC");
    expect(res.body.agreement.agreementText).toBe(challenge.message);
    const declinedKyc = await t.request("POST", `/v1/loans/${loan.id}/kyc-confirmation`, { body: { verified: false }, headers: { "x-api-key": m.key } });
    expect(declinedKyc.body.loan.fundingState).toBe("WAITING_KYC");
    const kyc = await t.request("POST", `/v1/loans/${loan.id}/kyc-confirmation`, { body: { verified: true }, headers: { "x-api-key": m.key } });
    expect(kyc.body.loan).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
  });

  test("a bad signature, a wrong wallet, an expired or used challenge: 400 naming the field, no agreement", async () => {
    const { m, account, loan } = await gated();
    const challenge = await challengeFor(m, loan.id);
    const post = (body: Record<string, unknown>) => t.request("POST", `/v1/loans/${loan.id}/agreement`, { body, headers: { "x-api-key": m.key } });
    const byOther = await wallet().signMessage({ message: challenge.message });
    const wrong = await post({ walletSignature: byOther, agreementChallengeId: challenge.id });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message[0]).toStartWith("walletSignature:");
    const garbage = await post({ walletSignature: "0x1234", agreementChallengeId: challenge.id });
    expect(garbage.body.message[0]).toStartWith("walletSignature:");
    const unknown = await post({ walletSignature: byOther, agreementChallengeId: newId() });
    expect(unknown.body.message[0]).toStartWith("agreementChallengeId:");

    // The failed attempts did not use the challenge up: the right signature still works…
    const good = await account.signMessage({ message: challenge.message });
    // …but not after it expires on the tenant's clock.
    await t.db
      .update(tenants)
      .set({ clockOffsetMs: 5 * 60_000 })
      .where(eq(tenants.id, m.tenantId));
    const expired = await post({ walletSignature: good, agreementChallengeId: challenge.id });
    expect(expired.status).toBe(400);
    expect(expired.body.message).toEqual(["agreementChallengeId: the challenge has expired"]);
    await t.db.update(tenants).set({ clockOffsetMs: 0 }).where(eq(tenants.id, m.tenantId));
    expect(await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id))).toEqual([]);
  });

  test("a declined loan takes no agreement: no challenge (409), and a challenge issued before the decline is refused unused", async () => {
    const m = await merchant();
    await setPolicy(m, { requireKycVerified: true });
    const declined = (await post(m, loanBody(m))).body;
    expect(declined).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED" });
    const refused = await t.request("POST", `/v1/loans/${declined.id}/agreement-challenge`, { headers: { "x-api-key": m.key } });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ statusCode: 409, message: expect.stringContaining("declined"), error: "Conflict" });

    // Issued while the loan waited for KYC, then the loan declined (as a review's REJECT leaves it).
    const { m: gatedMerchant, account, loan } = await gated();
    const challenge = await challengeFor(gatedMerchant, loan.id);
    await t.db.update(loans).set({ decisionOutcome: "DECLINED" }).where(eq(loans.id, loan.id));
    const body = { walletSignature: await account.signMessage({ message: challenge.message }), agreementChallengeId: challenge.id };
    const late = await t.request("POST", `/v1/loans/${loan.id}/agreement`, { body, headers: { "x-api-key": gatedMerchant.key } });
    expect(late.status).toBe(409);
    expect(await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id))).toEqual([]);
    expect((await t.deps.challenges.get(challenge.id))?.consumedAt).toBeNull();
  });

  test("10 concurrent uses of one challenge: exactly one agreement", async () => {
    const { m, account, loan } = await gated();
    const challenge = await challengeFor(m, loan.id);
    const signature = await account.signMessage({ message: challenge.message });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.request("POST", `/v1/loans/${loan.id}/agreement`, {
          body: { walletSignature: signature, agreementChallengeId: challenge.id },
          headers: { "x-api-key": m.key },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.every((r) => r.status === 201 || r.status === 400 || r.status === 409)).toBe(true);
    expect(await t.db.select().from(agreements).where(eq(agreements.loanId, loan.id))).toHaveLength(1);
  });

  test("challenges only before funding; another tenant's loan 404", async () => {
    const m = await merchant();
    const funded = (await post(m, loanBody(m))).body;
    const res = await t.request("POST", `/v1/loans/${funded.id}/agreement-challenge`, { headers: { "x-api-key": m.key } });
    expect(res.status).toBe(409);
    const other = await merchant();
    for (const path of ["agreement-challenge", "kyc-confirmation", "agreement"]) {
      const body =
        path === "kyc-confirmation" ? { verified: true } : path === "agreement" ? { walletSignature: "0x00", agreementChallengeId: newId() } : undefined;
      const r = await t.request("POST", `/v1/loans/${funded.id}/${path}`, { body, headers: { "x-api-key": other.key } });
      expect(r.status).toBe(404);
    }
  });
});

describe("liquidity", () => {
  test("no headroom: CREATED, AWAITING_LIQUIDITY, funding_failed + liquidity.unavailable once", async () => {
    const m = await merchant();
    await t.db.update(liquidityPools).set({ available: 50_000_000n }).where(eq(liquidityPools.tenantId, m.tenantId));
    const res = await post(m, loanBody(m));
    expect(res.body).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    expect(res.body.decision.outcome).toBe("APPROVED");
    const replay = await post(m, { ...loanBody(m), idempotencyKey: res.body.idempotencyKey });
    expect(replay.status).toBe(200);
    expect(await eventTypes(res.body.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funding_failed", "liquidity.unavailable"]);
    // Liquidity returns: the loan's writer funds it.
    await t.db.update(liquidityPools).set({ available: 1_000_000_000n }).where(eq(liquidityPools.tenantId, m.tenantId));
    const funded = await t.deps.writer.run({ kind: "process", tenantId: m.tenantId, loanId: res.body.id });
    expect(funded.status).toBe("ACTIVE");
  });

  test("liquidity.low fires once when headroom falls under the threshold", async () => {
    const m = await merchant();
    await t.db.update(liquidityPools).set({ available: 1_150_000_000n, lowThreshold: 1_000_000_000n }).where(eq(liquidityPools.tenantId, m.tenantId));
    await post(m, loanBody(m)); // headroom 1050.00: above
    await post(m, loanBody(m)); // 950.00: under → fires
    await post(m, loanBody(m)); // 850.00: still under → no second event
    const lows = await t.db
      .select()
      .from(events)
      .where(and(eq(events.tenantId, m.tenantId), eq(events.type, "liquidity.low")));
    expect(lows).toHaveLength(1);
    expect(lows[0]!.envelope.data).toMatchObject({ pool: { headroom: "950.00", lowThreshold: "1000.00" } });
  });
});
