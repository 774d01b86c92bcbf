import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * SPEC.md's sandbox scenarios ("Errors": Happy path up to ACTIVE, Declined,
 * Manual review, Duplicate submit, Overdue and default, KYC gate) plus the
 * loan-level KYC gate and the liquidity path, over HTTP against the real
 * bundled workers on workerd: each asserts the spec's names (statuses,
 * decision outcomes, reason codes, event types in order, fields), not only
 * status codes. Every test signs up its own tenant, so policies, settings,
 * pools and sandbox clocks never leak between tests.
 */
describe("loan scenarios on workerd", () => {
  let stack: TestStack;
  let n = 0;
  const PASSWORD = "correct horse battery staple";
  const DAY_MS = 86_400_000;

  beforeAll(async () => {
    // COUNT_ROUND_TRIPS: a request that sends `x-round-trips` is answered with its round trips (development only).
    stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } }, vars: { COUNT_ROUND_TRIPS: "1" } });
  }, 60_000);
  afterAll(() => stack?.dispose());

  type Merchant = Awaited<ReturnType<typeof newMerchant>>;

  /** Signup → API key → /v1/me (workers/local/integration.ts). */
  const newMerchant = () => signUpMerchant(stack, "Lender");

  const newWallet = () => privateKeyToAccount(generatePrivateKey());

  function loanBody(m: Merchant, overrides: Record<string, unknown> = {}) {
    return {
      loanProductId: m.loanProductId,
      borrowerRef: `borrower-${++n}`,
      borrowerWalletAddress: newWallet().address,
      chain: "POLYGON_AMOY",
      principalAmount: "100.00",
      idempotencyKey: `order-${crypto.randomUUID()}`,
      ...overrides,
    };
  }

  async function createLoan(m: Merchant, overrides: Record<string, unknown> = {}) {
    const res = await m.api("/v1/loans", { json: loanBody(m, overrides) });
    expect(res.status).toBe(201);
    return res.body;
  }

  /** The loan's events from the outbox (GET /v1/events, newest first), oldest first. */
  async function eventsOf(m: Merchant, loanId: string) {
    const res = await m.api(`/v1/events?loanId=${loanId}&limit=100`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    return [...(res.body.data as any[])].reverse();
  }
  const typesOf = async (m: Merchant, loanId: string) => (await eventsOf(m, loanId)).map((e) => e.type as string);

  async function settlementsOf(m: Merchant, loanId: string): Promise<any[]> {
    const res = await m.api(`/v1/settlements/${loanId}?limit=100`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    // Newest first, as every list: oldest first here.
    return [...res.body.data].reverse();
  }

  /** The tenant's own pool, straight from D1 (base units), for "no funds move". */
  async function poolOf(tenantId: string) {
    const db = await stack.db();
    return db
      .prepare("SELECT available_units AS available, reserved_units AS reserved FROM liquidity_pools WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ available: number; reserved: number }>();
  }

  async function listedIds(m: Merchant, status: string): Promise<string[]> {
    const res = await m.api(`/v1/loans?status=${status}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.data as any[]).map((l) => l.id);
  }

  async function putPolicy(m: Merchant, policy: Partial<{ requireKycVerified: boolean; manualReviewAbove: string | null }>) {
    const res = await m.api("/v1/policies", {
      method: "PUT",
      json: { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [], ...policy },
    });
    expect(res.status).toBe(200);
    return res.body.version as number;
  }

  /** Moves the tenant's sandbox clock so that it reads `target` plus `extraMs`. */
  async function advanceClockTo(m: Merchant, target: string, extraMs: number) {
    const clock = await m.api("/v1/sandbox/clock");
    expect(clock.status).toBe(200);
    const seconds = Math.ceil((Date.parse(target) + extraMs - Date.parse(clock.body.now)) / 1000);
    const moved = await m.api("/v1/sandbox/clock/advance", { json: { seconds } });
    expect(moved.status).toBe(200);
    expect(Date.parse(moved.body.now)).toBeGreaterThanOrEqual(Date.parse(target) + extraMs);
    return moved.body.now as string;
  }

  test("a loan is created, underwritten and funded in 4 D1 round trips and 2 Durable Object calls before its answer", async () => {
    const m = await newMerchant();
    const res = await m.api("/v1/loans", { json: loanBody(m), headers: { "x-round-trips": "1" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
    // The api: the key's lookup, creation's reads, creation's write (with the decision and reservation); one call to
    // the loan's object, which calls the chain's and commits the funding. The relay after the response is not counted.
    expect(JSON.parse(res.headers.get("x-round-trips") ?? "null")).toEqual({ d1: 3, doCalls: 1, inObjects: { d1: 1, doCalls: 1 } });
  });

  test("Happy path up to ACTIVE: created, approved, funded on the simulated chain, one id throughout", async () => {
    const m = await newMerchant();
    const poolBefore = await poolOf(m.tenantId);
    const wallet = newWallet();
    const res = await m.api("/v1/loans", { json: loanBody(m, { borrowerWalletAddress: wallet.address.toLowerCase(), tenureDays: 7 }) });
    expect(res.status).toBe(201);
    const loan = res.body;

    expect(loan).toMatchObject({
      status: "ACTIVE",
      derivedStatus: "ACTIVE",
      fundingState: "FUNDED",
      chain: "POLYGON_AMOY",
      stablecoin: "USDC",
      borrowerWalletAddress: wallet.address, // stored and returned EIP-55
      principalAmount: "100.00",
      processingFee: "2.00", // 2% of 100.00
      lateFee: "0.00",
      totalDue: "102.00",
      tenureDays: 7,
      program: null,
      channel: null,
    });
    expect(loan.decision).toMatchObject({ outcome: "APPROVED", reasons: [], policyVersion: expect.any(Number) });
    expect(loan.decision.decidedAt).toEqual(expect.any(String));
    expect(loan.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Date.parse(loan.dueAt) - Date.parse(loan.fundedAt)).toBe(7 * DAY_MS);

    const fetched = await m.api(`/v1/loans/${loan.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject({ id: loan.id, status: "ACTIVE", fundedAt: loan.fundedAt, dueAt: loan.dueAt, fundingTxHash: loan.fundingTxHash });
    expect(await listedIds(m, "ACTIVE")).toContain(loan.id);

    const events = await eventsOf(m, loan.id);
    expect(events.map((e) => e.type)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    for (const e of events) {
      expect(e).toMatchObject({ id: expect.any(String), tenantId: m.tenantId, program: null, channel: null });
      expect(e.data.loan.id).toBe(loan.id); // the join key, unchanged across events
    }
    expect(events[0].data.loan).toMatchObject({ status: "CREATED", decision: null });
    expect(events[1].data.loan.decision.outcome).toBe("APPROVED");
    expect(events[2].data.loan).toMatchObject({ status: "ACTIVE", fundingTxHash: loan.fundingTxHash, dueAt: loan.dueAt });

    const settlements = await settlementsOf(m, loan.id);
    expect(settlements).toEqual([
      expect.objectContaining({ kind: "FUNDING", status: "CONFIRMED", amount: "100.00", txHash: loan.fundingTxHash, chain: "POLYGON_AMOY" }),
    ]);
    const poolAfter = await poolOf(m.tenantId);
    expect(poolAfter!.available).toBe(poolBefore!.available - 100_000_000);
    expect(poolAfter!.reserved).toBe(0);
  });

  test("Declined (KYC gate): a PENDING borrower under requireKycVerified is DECLINED, shown under DECLINED, no funds move; once VERIFIED a new loan is APPROVED", async () => {
    const m = await newMerchant();
    const version = await putPolicy(m, { requireKycVerified: true });
    const poolBefore = await poolOf(m.tenantId);
    const borrowerRef = `kyc-borrower-${++n}`;

    const declined = await createLoan(m, { borrowerRef });
    expect(declined).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED", fundedAt: null, dueAt: null, fundingTxHash: null });
    expect(declined.decision).toMatchObject({ outcome: "DECLINED", policyVersion: version });
    expect(declined.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["KYC_NOT_VERIFIED"]);

    expect(await listedIds(m, "DECLINED")).toContain(declined.id);
    expect(await listedIds(m, "CREATED")).not.toContain(declined.id);
    expect(await typesOf(m, declined.id)).toEqual(["loan.application_submitted", "loan.decision"]);
    const [, decision] = await eventsOf(m, declined.id);
    expect(decision.data.loan.decision.outcome).toBe("DECLINED");
    expect(await settlementsOf(m, declined.id)).toEqual([]);
    expect(await poolOf(m.tenantId)).toEqual(poolBefore);
    // Still declined later: a decision is not revisited.
    expect((await m.api(`/v1/loans/${declined.id}`)).body).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED" });

    const kyc = await m.api(`/v1/borrowers/${borrowerRef}/kyc`, { method: "PATCH", json: { status: "VERIFIED", merchantUserId: "kyc-ops-7" } });
    expect(kyc.status).toBe(200);
    expect(kyc.body.kyc).toMatchObject({ status: "VERIFIED", merchantUserId: "kyc-ops-7", verifiedAt: expect.any(String) });

    const approved = await createLoan(m, { borrowerRef });
    expect(approved.id).not.toBe(declined.id);
    expect(approved.decision).toMatchObject({ outcome: "APPROVED", reasons: [], policyVersion: version });
    expect(approved.status).toBe("ACTIVE");
  });

  test("Manual review: above manualReviewAbove the loan waits CREATED; APPROVE → loan.approved then funded, REJECT → DECLINED with loan.rejected; a second review 409, a MEMBER 403", async () => {
    const m = await newMerchant();
    const version = await putPolicy(m, { manualReviewAbove: "50.00" });

    // The threshold is strictly "above": 50.00 itself is approved at once.
    expect((await createLoan(m, { principalAmount: "50.00" })).decision.outcome).toBe("APPROVED");

    const toApprove = await createLoan(m, { principalAmount: "75.00" });
    expect(toApprove).toMatchObject({ status: "CREATED", derivedStatus: "CREATED", fundedAt: null, fundingTxHash: null });
    expect(toApprove.decision).toMatchObject({ outcome: "MANUAL_REVIEW", policyVersion: version });
    expect(toApprove.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["MANUAL_REVIEW_AMOUNT"]);
    expect(await listedIds(m, "CREATED")).toContain(toApprove.id);
    expect(await settlementsOf(m, toApprove.id)).toEqual([]);
    // Waiting means waiting: a cron tick does not fund it.
    await stack.scheduled();
    expect((await m.api(`/v1/loans/${toApprove.id}`)).body).toMatchObject({ status: "CREATED", fundedAt: null });

    const memberEmail = `member.${Date.now()}.${++n}@merchant.example`;
    expect((await m.dashboard("/v1/users", { json: { email: memberEmail, password: PASSWORD, role: "MEMBER" } })).status).toBe(201);
    const memberToken = (await stack.fetch("/v1/auth/login", { json: { email: memberEmail, password: PASSWORD } })).body.accessToken;
    const byMember = await m.dashboard(`/v1/loans/${toApprove.id}/review`, { json: { action: "APPROVE", note: "lgtm" } }, memberToken);
    expect(byMember.status).toBe(403);
    expect(byMember.body.error).toBe("Forbidden");
    // An API key is not a dashboard session.
    expect((await m.api(`/v1/loans/${toApprove.id}/review`, { json: { action: "APPROVE", note: "x" } })).status).toBe(401);

    const approved = await m.dashboard(`/v1/loans/${toApprove.id}/review`, { json: { action: "APPROVE", note: "income checked" } });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: toApprove.id, status: "ACTIVE", fundingState: "FUNDED", principalAmount: "75.00", totalDue: "76.50" });
    expect(approved.body.decision).toMatchObject({
      outcome: "APPROVED",
      reviewedBy: m.ownerUserId,
      reviewNote: "income checked",
      reviewedAt: expect.any(String),
    });
    expect(await typesOf(m, toApprove.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.approved", "loan.funded"]);
    expect(await settlementsOf(m, toApprove.id)).toEqual([expect.objectContaining({ kind: "FUNDING", amount: "75.00" })]);

    const again = await m.dashboard(`/v1/loans/${toApprove.id}/review`, { json: { action: "REJECT", note: "changed my mind" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("Conflict");

    const poolBefore = await poolOf(m.tenantId);
    const toReject = await createLoan(m, { principalAmount: "75.00" });
    expect(toReject.decision.outcome).toBe("MANUAL_REVIEW");
    const rejected = await m.dashboard(`/v1/loans/${toReject.id}/review`, { json: { action: "REJECT", note: "thin file" } });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED", fundedAt: null });
    expect(rejected.body.decision).toMatchObject({ outcome: "DECLINED", reviewedBy: m.ownerUserId, reviewNote: "thin file" });
    expect(await typesOf(m, toReject.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.rejected"]);
    expect(await listedIds(m, "DECLINED")).toContain(toReject.id);
    expect(await settlementsOf(m, toReject.id)).toEqual([]);
    expect(await poolOf(m.tenantId)).toEqual(poolBefore);
    expect((await m.dashboard(`/v1/loans/${toReject.id}/review`, { json: { action: "APPROVE", note: "" } })).status).toBe(409);
  });

  test("Duplicate submit: one loan per idempotencyKey, even for 25 simultaneous requests; another tenant's same key is another loan", async () => {
    const m = await newMerchant();
    const body = loanBody(m);
    const first = await m.api("/v1/loans", { json: body });
    const second = await m.api("/v1/loans", { json: body });
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(second.body).toMatchObject({ id: first.body.id, status: "ACTIVE", idempotencyKey: body.idempotencyKey });

    const burst = loanBody(m);
    const responses = await Promise.all(Array.from({ length: 25 }, () => m.api("/v1/loans", { json: burst })));
    expect(responses.filter((r) => r.status >= 500)).toEqual([]);
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(24).fill(200), 201].sort());
    const ids = new Set(responses.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const types = await typesOf(m, id!);
    expect(types.filter((t) => t === "loan.application_submitted")).toHaveLength(1);
    // Never decided or funded twice either.
    expect(types).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    expect(await settlementsOf(m, id!)).toHaveLength(1);
    const db = await stack.db();
    const rows = await db
      .prepare("SELECT COUNT(*) AS c FROM loans WHERE tenant_id = ? AND idempotency_key = ?")
      .bind(m.tenantId, burst.idempotencyKey)
      .first<{ c: number }>();
    expect(rows!.c).toBe(1);

    const other = await newMerchant();
    const elsewhere = await other.api("/v1/loans", { json: { ...burst, loanProductId: other.loanProductId } });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.id).not.toBe(id);
    // And neither tenant sees the other's loan, its money movements or its events.
    expect((await other.api(`/v1/loans/${id}`)).status).toBe(404);
    expect((await other.api(`/v1/settlements/${id}`)).status).toBe(404);
    expect((await other.api(`/v1/events?loanId=${id}`)).body.data).toEqual([]);
  });

  test("Overdue and default: past dueAt → loan.overdue once and a late fee per started day; past grace → DEFAULTED and loan.defaulted once, whatever sweeps follow", async () => {
    const m = await newMerchant();
    const loan = await createLoan(m, { tenureDays: 3 });
    expect(loan).toMatchObject({ status: "ACTIVE", totalDue: "102.00", gracePeriodDays: 3, dailyLateFee: "1.00" });
    expect(Date.parse(loan.dueAt) - Date.parse(loan.fundedAt)).toBe(3 * DAY_MS);

    // One minute past dueAt: one started day.
    await advanceClockTo(m, loan.dueAt, 60_000);
    let now = (await m.api(`/v1/loans/${loan.id}`)).body;
    expect(now).toMatchObject({ status: "ACTIVE", overdue: true, lateFeeDays: 1, lateFee: "1.00", totalDue: "103.00" });
    expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue"]);

    // A day later, still within grace: two started days, no second loan.overdue.
    await advanceClockTo(m, loan.dueAt, DAY_MS + 60_000);
    now = (await m.api(`/v1/loans/${loan.id}`)).body;
    expect(now).toMatchObject({ status: "ACTIVE", lateFeeDays: 2, lateFee: "2.00", totalDue: "104.00" });
    await stack.scheduled();
    expect((await typesOf(m, loan.id)).filter((t) => t === "loan.overdue")).toHaveLength(1);

    // Past dueAt + 3 days of grace: DEFAULTED; late fees stop at the default (3 days).
    await advanceClockTo(m, loan.dueAt, 3 * DAY_MS + 60_000);
    now = (await m.api(`/v1/loans/${loan.id}`)).body;
    expect(now).toMatchObject({
      status: "DEFAULTED",
      derivedStatus: "DEFAULTED",
      lateFeeDays: 3,
      lateFee: "3.00",
      totalDue: "105.00",
      defaultedAt: expect.any(String),
    });
    expect(await listedIds(m, "DEFAULTED")).toContain(loan.id);

    // More time and two cron ticks (overlapping, then again) add nothing.
    await advanceClockTo(m, loan.dueAt, 10 * DAY_MS);
    await Promise.all([stack.scheduled(), stack.scheduled()]);
    await stack.scheduled();
    const types = await typesOf(m, loan.id);
    expect(types).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
    const [, , , overdue, defaulted] = await eventsOf(m, loan.id);
    expect(overdue.data.loan).toMatchObject({ status: "ACTIVE", overdue: true });
    expect(defaulted.data.loan).toMatchObject({ status: "DEFAULTED" });
    expect((await m.api(`/v1/loans/${loan.id}`)).body).toMatchObject({ status: "DEFAULTED", lateFee: "3.00", totalDue: "105.00" });
  });

  describe("loan-level KYC gate (requiresKycBeforeFunding)", () => {
    async function gatedMerchant() {
      const m = await newMerchant();
      const saved = await m.dashboard("/v1/settings", {
        method: "PUT",
        json: {
          requiresKycBeforeFunding: true,
          branding: {
            companyName: "Gated Lender",
            logoUrl: null,
            primaryColor: "#1A2B3C",
            supportEmail: "help@merchant.example",
            termsUrl: "https://merchant.example/terms",
          },
        },
      });
      expect(saved.status).toBe(200);
      return m;
    }

    const agreementCount = async (loanId: string) =>
      (await (await stack.db()).prepare("SELECT agreement_text AS text FROM agreements WHERE loan_id = ?").bind(loanId).all<{ text: string }>()).results;

    test("an approved loan waits (WAITING_KYC) until both the KYC confirmation and the agreement are recorded; the agreement is immutable; a bad signature funds nothing", async () => {
      const m = await gatedMerchant();
      const wallet = newWallet();
      const loan = await createLoan(m, { borrowerWalletAddress: wallet.address });
      expect(loan).toMatchObject({ status: "CREATED", derivedStatus: "CREATED", fundingState: "WAITING_KYC", fundedAt: null });
      expect(loan.decision.outcome).toBe("APPROVED");
      expect(loan.kycGate).toEqual({ required: true, kycConfirmed: false, agreementRecorded: false });

      const challenge = await m.api(`/v1/loans/${loan.id}/agreement-challenge`, { method: "POST" });
      expect(challenge.status).toBe(201);
      expect(challenge.body.message).toContain(wallet.address);
      expect(challenge.body.message).toContain(challenge.body.id);

      // Signed by another wallet: 400 naming walletSignature, nothing recorded or funded.
      const forged = await m.api(`/v1/loans/${loan.id}/agreement`, {
        json: { agreementChallengeId: challenge.body.id, walletSignature: await newWallet().signMessage({ message: challenge.body.message }) },
      });
      expect(forged.status).toBe(400);
      expect(forged.body.error).toBe("Bad Request");
      expect(JSON.stringify(forged.body.message)).toContain("walletSignature");
      expect((await m.api(`/v1/loans/${loan.id}`)).body).toMatchObject({ status: "CREATED", fundingState: "WAITING_KYC" });
      expect(await settlementsOf(m, loan.id)).toEqual([]);

      const text = "I, the borrower, accept the Gated Lender terms v3.";
      const signed = await m.api(`/v1/loans/${loan.id}/agreement`, {
        json: { agreementChallengeId: challenge.body.id, walletSignature: await wallet.signMessage({ message: challenge.body.message }), agreementText: text },
      });
      expect(signed.status).toBe(201);
      expect(signed.body.agreement).toMatchObject({ loanId: loan.id, challengeId: challenge.body.id, walletAddress: wallet.address, agreementText: text });
      // The agreement alone does not fund: KYC is still missing.
      expect(signed.body.loan).toMatchObject({
        status: "CREATED",
        fundingState: "WAITING_KYC",
        kycGate: { required: true, kycConfirmed: false, agreementRecorded: true },
      });
      await stack.scheduled();
      expect((await m.api(`/v1/loans/${loan.id}`)).body).toMatchObject({ status: "CREATED", fundedAt: null });

      // A second agreement never overwrites the first; nor can another challenge be issued.
      const second = await m.api(`/v1/loans/${loan.id}/agreement`, {
        json: {
          agreementChallengeId: challenge.body.id,
          walletSignature: await wallet.signMessage({ message: challenge.body.message }),
          agreementText: "something else",
        },
      });
      expect(second.status).toBe(409);
      expect((await m.api(`/v1/loans/${loan.id}/agreement-challenge`, { method: "POST" })).status).toBe(409);
      expect(await agreementCount(loan.id)).toEqual([{ text }]);

      const kyc = await m.api(`/v1/loans/${loan.id}/kyc-confirmation`, { json: { verified: true, merchantUserId: "kyc-ops-7", reference: "idv-123" } });
      expect(kyc.status).toBe(201);
      expect(kyc.body).toMatchObject({ loanId: loan.id, verified: true, merchantUserId: "kyc-ops-7", reference: "idv-123" });
      const funded = (await m.api(`/v1/loans/${loan.id}`)).body;
      expect(funded).toMatchObject({
        id: loan.id,
        status: "ACTIVE",
        fundingState: "FUNDED",
        kycGate: { required: true, kycConfirmed: true, agreementRecorded: true },
      });
      expect(funded.fundingTxHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
      expect(await agreementCount(loan.id)).toEqual([{ text }]);
    });

    test("an expired challenge is refused; 10 simultaneous agreements with one valid challenge and signature: exactly one recorded, one funding", async () => {
      const m = await gatedMerchant();
      const wallet = newWallet();
      const loan = await createLoan(m, { borrowerWalletAddress: wallet.address });
      const kyc = await m.api(`/v1/loans/${loan.id}/kyc-confirmation`, { json: { verified: true } });
      expect(kyc.status).toBe(201);
      // KYC alone does not fund either.
      expect(kyc.body.loan).toMatchObject({
        status: "CREATED",
        fundingState: "WAITING_KYC",
        kycGate: { required: true, kycConfirmed: true, agreementRecorded: false },
      });

      // A challenge lives 5 minutes on the tenant's clock: a valid signature over an expired one is refused.
      const stale = (await m.api(`/v1/loans/${loan.id}/agreement-challenge`, { method: "POST" })).body;
      expect((await m.api("/v1/sandbox/clock/advance", { json: { seconds: 301 } })).status).toBe(200);
      const expired = await m.api(`/v1/loans/${loan.id}/agreement`, {
        json: { agreementChallengeId: stale.id, walletSignature: await wallet.signMessage({ message: stale.message }) },
      });
      expect(expired.status).toBe(400);
      expect(JSON.stringify(expired.body.message)).toContain("agreementChallengeId");

      const challenge = (await m.api(`/v1/loans/${loan.id}/agreement-challenge`, { method: "POST" })).body;
      const walletSignature = await wallet.signMessage({ message: challenge.message });
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          m.api(`/v1/loans/${loan.id}/agreement`, { json: { agreementChallengeId: challenge.id, walletSignature, agreementText: `attempt ${i}` } }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 201 && s !== 400 && s !== 409)).toEqual([]);

      const winner = responses.find((r) => r.status === 201)!;
      expect(await agreementCount(loan.id)).toEqual([{ text: winner.body.agreement.agreementText }]);
      expect((await m.api(`/v1/loans/${loan.id}`)).body).toMatchObject({ status: "ACTIVE", fundingState: "FUNDED" });
      expect(await typesOf(m, loan.id)).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
      expect(await settlementsOf(m, loan.id)).toHaveLength(1);
    });
  });

  test("Liquidity: an empty pool leaves an approved loan CREATED (AWAITING_LIQUIDITY) with loan.funding_failed and liquidity.unavailable; returning liquidity funds it without a new create call", async () => {
    const m = await newMerchant();
    const emptied = await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "0.00" } });
    expect(emptied.status).toBe(200);

    const loan = await createLoan(m);
    expect(loan).toMatchObject({ status: "CREATED", derivedStatus: "CREATED", fundingState: "AWAITING_LIQUIDITY", fundedAt: null, fundingTxHash: null });
    expect(loan.decision.outcome).toBe("APPROVED");
    const waiting = await eventsOf(m, loan.id);
    expect(waiting.map((e) => e.type)).toEqual(["loan.application_submitted", "loan.decision", "loan.funding_failed", "liquidity.unavailable"]);
    expect(waiting[3].data).toMatchObject({ loan: { id: loan.id }, requested: "100.00" });
    expect(await settlementsOf(m, loan.id)).toEqual([]);
    // A cron tick with the pool still empty reports nothing new.
    await stack.scheduled();
    expect(await typesOf(m, loan.id)).toHaveLength(4);

    const refilled = await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "1000.00" } });
    expect(refilled.status).toBe(200);
    const funded = (await m.api(`/v1/loans/${loan.id}`)).body;
    expect(funded).toMatchObject({ id: loan.id, status: "ACTIVE", fundingState: "FUNDED", fundedAt: expect.any(String) });
    expect((await typesOf(m, loan.id)).at(-1)).toBe("loan.funded");
    expect(await settlementsOf(m, loan.id)).toEqual([expect.objectContaining({ kind: "FUNDING", amount: "100.00" })]);
    expect(await poolOf(m.tenantId)).toEqual({ available: 900_000_000, reserved: 0 });
  });
});
