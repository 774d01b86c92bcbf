import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loans } from "../../../db/schema/loans.ts";
import { tenants } from "../../../db/schema/tenants.ts";
import { DEV_SECRETS_KEY } from "../../../shared/crypto/secret-box.ts";
import type { FetchLike } from "../../../shared/http/fetch-like.ts";
import { consoleLogger } from "../../../shared/observability/logger.ts";
import { processDeliveryMessage } from "../../../shared/webhooks/deliver.ts";
import type { memoryDeliveryQueue } from "../../../shared/webhooks/memory-queue.ts";
import { itemsOf } from "../../../shared/webhooks/messages.ts";
import { bearer, createKey, signUpTenant } from "../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { createEmbedTestApp } from "../testing/harness.ts";
import { evmBorrower, tonBorrower, widgetCalls, type TestBorrower } from "../../../shared/testing/widget-borrower.ts";

/**
 * What an embed-key holder could do to a merchant (issue 10, items 1 and 8),
 * replayed against the embed and api apps: squatting the merchant's
 * idempotency keys, reading loans outside the program, using a challenge
 * elsewhere, learning another wallet's open loans. The workerd tier replays
 * the attacks too (workers/local/embed-abuse.test.ts).
 */
const ORIGIN = "https://shop.example";
let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

const SESSION = "x-svc-wallet-session";

/** A tenant whose default program allows ORIGIN, with its API key and embed calls. */
async function merchant() {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body;
  const program = me.widgetPrograms[0];
  await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: bearer(owner.token),
  });
  const api = (method: string, path: string, body?: unknown) => t.request(method, path, { body, headers: { "x-api-key": key } });
  const dashboard = (method: string, path: string, body?: unknown) => t.request(method, path, { body, headers: bearer(owner.token) });
  return {
    owner,
    key,
    api,
    dashboard,
    productId: me.merchantConfigs[0].loanProductId as string,
    merchantConfigId: program.merchantConfigId as string,
    ...embed(program.embedKey as string, program.id as string),
  };
}
type M = Awaited<ReturnType<typeof merchant>>;

/** The embed calls of one program (another program of the same tenant gets its own). */
function embed(embedKey: string, programId: string) {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    e.request("POST", `/v1/embed/${embedKey}${path}`, { body, headers: { origin: ORIGIN, ...headers } });
  const get = (path: string) => e.request("GET", path.startsWith("/embed/") ? path : `/v1/embed/${embedKey}${path}`, { headers: { origin: ORIGIN } });
  return { embedKey, programId, post, get, widget: widgetCalls(post) };
}

async function secondProgram(m: M) {
  const res = await m.dashboard("POST", "/v1/widget-programs", { name: "Second", merchantConfigId: m.merchantConfigId, allowedOrigins: [ORIGIN] });
  expect(res.status).toBe(201);
  return embed(res.body.embedKey, res.body.id);
}

const apiLoan = (m: M, over: Record<string, unknown> = {}) =>
  m.api("POST", "/v1/loans", {
    loanProductId: m.productId,
    borrowerRef: "customer-7",
    borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
    chain: "POLYGON_AMOY",
    principalAmount: "100.00",
    idempotencyKey: crypto.randomUUID(),
    ...over,
  });

const loansOfTenant = (tenantId: string) => t.db.select().from(loans).where(eq(loans.tenantId, tenantId));

/** Fields of the merchant's that a widget response must never carry. */
const MERCHANT_FIELDS = ["borrowerRef", "borrowerId", "idempotencyKey", "loanProductId", "kycGate"];
const REVIEW_FIELDS = ["reviewedBy", "reviewedAt", "reviewNote", "policyVersion", "decidedAt"];
function expectRedacted(loan: Record<string, any>) {
  for (const field of MERCHANT_FIELDS) expect(loan).not.toHaveProperty(field);
  if (loan.decision) for (const field of REVIEW_FIELDS) expect(loan.decision).not.toHaveProperty(field);
}

describe("idempotency: widget draws have their own key space (item 1)", () => {
  test("accept with K first: the merchant's POST /v1/loans with K still makes the merchant's loan (201), then 200 on retry; the widget's retry gets its own loan", async () => {
    const m = await merchant();
    const borrower = evmBorrower();
    const body = await m.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7, idempotencyKey: "order-1002" });
    const squat = await m.widget.accept(body);
    expect(squat.status).toBe(201);

    const real = await apiLoan(m, { idempotencyKey: "order-1002", principalAmount: "250.00" });
    expect(real.status).toBe(201);
    expect(real.body.id).not.toBe(squat.body.loan.id);
    expect(real.body).toMatchObject({ borrowerRef: "customer-7", principalAmount: "250.00", idempotencyKey: "order-1002", program: null, channel: null });
    const again = await apiLoan(m, { idempotencyKey: "order-1002" });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(real.body.id);

    // The widget's own retry (same challenge, key and signature) still answers 200 with its own loan.
    const retry = await m.widget.accept(body);
    expect(retry.status).toBe(200);
    expect(retry.body.loan.id).toBe(squat.body.loan.id);
    expectRedacted(retry.body.loan);
    expect(await loansOfTenant(m.owner.tenantId)).toHaveLength(2);
  });

  test("a merchant loan with K (reviewed, with a note) first: accept with K makes its own loan (201), and its response has nothing of the merchant's", async () => {
    const m = await merchant();
    expect(
      (await m.dashboard("PUT", "/v1/policies", { requireKycVerified: false, manualReviewAbove: "50.00", maxOpenLoansPerBorrower: null, blockedWallets: [] }))
        .status,
    ).toBe(200);
    const merchantLoan = await apiLoan(m, { idempotencyKey: "order-77", borrowerRef: "vip-customer-0042" });
    expect(merchantLoan.body.decision.outcome).toBe("MANUAL_REVIEW");
    const reviewed = await m.dashboard("POST", `/v1/loans/${merchantLoan.body.id}/review`, { action: "APPROVE", note: "internal: VIP, waived checks" });
    expect(reviewed.body.decision.reviewNote).toBe("internal: VIP, waived checks");

    const res = await m.widget.draw(evmBorrower(), { amount: "60.00", tenureDays: 7, idempotencyKey: "order-77" });
    expect(res.status).toBe(201);
    expect(res.body.loan.id).not.toBe(merchantLoan.body.id);
    expect(res.body.loan).toMatchObject({ program: m.programId, channel: "WEB", principalAmount: "60.00", decision: { outcome: "MANUAL_REVIEW" } });
    expectRedacted(res.body.loan);
    const raw = JSON.stringify(res.body);
    for (const secret of ["vip-customer-0042", "internal: VIP", "order-77", reviewed.body.decision.reviewedBy]) expect(raw).not.toContain(secret);
    // The merchant's loan is untouched.
    expect((await m.api("GET", `/v1/loans/${merchantLoan.body.id}`)).body).toMatchObject({
      status: "ACTIVE",
      borrowerRef: "vip-customer-0042",
      principalAmount: "100.00",
    });
  });

  test("no key the merchant crafts reaches a widget loan: the widget's default key and a key that spells a widget scope both make new merchant loans", async () => {
    const m = await merchant();
    const borrower = evmBorrower();
    const body = await m.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7 });
    const drawn = await m.widget.accept(body);
    expect(drawn.status).toBe(201);
    for (const key of [`accept:${body.agreementChallengeId}`, `embed:${m.programId}:${borrower.address}`]) {
      const res = await apiLoan(m, { idempotencyKey: key });
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(drawn.body.loan.id);
      expect(res.body.program).toBeNull();
    }
  });

  test("another wallet's accept with the same key makes its own loan; a retry is answered only to the wallet's signature", async () => {
    const m = await merchant();
    const first = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, idempotencyKey: "cart-1" });
    const second = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, idempotencyKey: "cart-1" });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.loan.id).not.toBe(first.body.loan.id);

    // Someone who learns a used challenge's values cannot replay it to read its loan without the wallet's signature.
    const borrower = evmBorrower();
    const body = await m.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7, idempotencyKey: "cart-2" });
    expect((await m.widget.accept(body)).status).toBe(201);
    const forged = await m.widget.accept({ ...body, walletSignature: (await evmBorrower().sign("x")).walletSignature });
    expect(forged.status).toBe(400);
    expect(forged.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: the challenge was already used"], error: "Bad Request" });
  });
});

describe("a challenge is bound to its program, tenant and rail", () => {
  test("a challenge from program A, from another tenant, or quoted before the rail changed: 400 at program B, and no loan", async () => {
    const m = await merchant();
    const b = await secondProgram(m);
    const borrower = evmBorrower();
    const fromA = await m.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7 });
    const atB = await b.post("/accept", fromA);
    expect(atB.status).toBe(400);
    expect(atB.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: no such challenge for this program"], error: "Bad Request" });

    const other = await merchant();
    const fromOther = await other.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7 });
    const crossTenant = await m.post("/accept", fromOther);
    expect(crossTenant.status).toBe(400);
    expect(crossTenant.body.message).toEqual(["agreementChallengeId: no such challenge for this program"]);

    // Quoted on POLYGON; the merchant moves the program's configuration to BASE before the accept.
    const stale = await m.widget.acceptBody(borrower, { amount: "100.00", tenureDays: 7 });
    const config = (await m.dashboard("GET", `/v1/merchant-configs/${m.merchantConfigId}`)).body;
    const moved = await m.dashboard("PUT", `/v1/merchant-configs/${m.merchantConfigId}`, { ...config, network: "BASE", stablecoin: "USDC" });
    expect(moved.status).toBe(200);
    const afterChange = await m.post("/accept", stale);
    expect(afterChange.status).toBe(400);
    expect(afterChange.body.message).toEqual(["agreementChallengeId: the program's rail changed since the quote"]);

    expect(await loansOfTenant(m.owner.tenantId)).toEqual([]);
    expect(await loansOfTenant(other.owner.tenantId)).toEqual([]);
    // The challenges were not consumed by the refusals: each still draws where it was issued.
    expect((await other.widget.accept(fromOther)).status).toBe(201);
  });
});

describe("embed loans are the program's own (item 8)", () => {
  test("another tenant's loan, another program's loan and an API loan: 404 on loans/:id, repayment-instructions and the repay page, as an unknown id", async () => {
    const m = await merchant();
    const b = await secondProgram(m);
    const other = await merchant();
    const own = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofB = await b.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofOther = await other.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofApi = await apiLoan(m);
    expect([own.status, ofB.status, ofOther.status, ofApi.status]).toEqual([201, 201, 201, 201]);

    expect((await m.get(`/loans/${own.body.loan.id}`)).status).toBe(200);
    expect((await m.get(`/loans/${own.body.loan.id}/repayment-instructions`)).status).toBe(200);
    expect((await m.get(`/embed/${m.embedKey}/repay/${own.body.loan.id}`)).status).toBe(200);

    const unknown = crypto.randomUUID();
    const unknownBody = (await m.get(`/loans/${unknown}`)).body;
    expect(unknownBody).toEqual({ statusCode: 404, message: "Loan not found", error: "Not Found" });
    const unknownInstructions = (await m.get(`/loans/${unknown}/repayment-instructions`)).body;
    const unknownPage = await m.get(`/embed/${m.embedKey}/repay/${unknown}`);
    for (const id of [ofB.body.loan.id, ofOther.body.loan.id, ofApi.body.id]) {
      const loan = await m.get(`/loans/${id}`);
      expect(loan.status).toBe(404);
      expect(loan.body).toEqual(unknownBody);
      const instructions = await m.get(`/loans/${id}/repayment-instructions`);
      expect(instructions.status).toBe(404);
      expect(instructions.body).toEqual(unknownInstructions);
      const page = await m.get(`/embed/${m.embedKey}/repay/${id}`);
      expect(page.status).toBe(404);
      expect(page.body).toEqual(unknownPage.body);
    }
  });

  test("the embed view of a loan names only what the borrower's screen shows", async () => {
    const m = await merchant();
    const drawn = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, idempotencyKey: "secret-order-ref" });
    const view = (await m.get(`/loans/${drawn.body.loan.id}`)).body.loan;
    expectRedacted(view);
    expect(view).toMatchObject({
      id: drawn.body.loan.id,
      status: "ACTIVE",
      fundingState: "FUNDED",
      program: m.programId,
      channel: "WEB",
      decision: { outcome: "APPROVED", reasons: [] },
    });
    expect(JSON.stringify(view)).not.toContain("secret-order-ref");
  });
});

describe("a widget loan's program and channel ride in its events (DECISIONS.md 'Embed and widget')", () => {
  test("every webhook delivered for the draw and every envelope of GET /v1/events carry program and channel", async () => {
    const m = await merchant();
    const url = "https://hooks.merchant.example/svc";
    expect((await m.dashboard("POST", "/v1/webhooks", { url, events: ["*"] })).status).toBe(201);
    const queue = t.deps.queue as ReturnType<typeof memoryDeliveryQueue>;
    queue.messages.length = 0;
    const drawn = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, channel: "ANDROID" });
    expect(drawn.status).toBe(201);
    const loanId = drawn.body.loan.id as string;

    // What the webhooks worker does with the accept's queue messages, with a fetch that records the bodies.
    const delivered: any[] = [];
    const fetch: FetchLike = async (to, init) => {
      expect(to).toBe(url);
      delivered.push(JSON.parse(String(init.body)));
      return new Response("ok");
    };
    const deps = { db: t.db, queue, clock: t.clock, fetch, secretsKey: DEV_SECRETS_KEY, timeoutMs: 1000, retryDelaysSeconds: [30, 120], log: consoleLogger };
    expect(queue.messages.length).toBeGreaterThan(0);
    while (queue.messages.length > 0) {
      const { body } = queue.messages.shift()!;
      for (const item of itemsOf(body)) if (item.kind === "delivery") await processDeliveryMessage(deps, item);
    }
    const ofLoan = delivered.filter((env) => env.data?.loan?.id === loanId);
    expect(ofLoan.map((env) => env.type).sort()).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    for (const env of ofLoan)
      expect(env).toMatchObject({ program: m.programId, channel: "ANDROID", data: { loan: { program: m.programId, channel: "ANDROID" } } });

    const listed = await m.api("GET", `/v1/events?loanId=${loanId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    for (const env of listed.body.data) expect(env).toMatchObject({ program: m.programId, channel: "ANDROID" });
    const one = await m.api("GET", `/v1/events/${listed.body.data[0].id}`);
    expect(one.body).toMatchObject({ program: m.programId, channel: "ANDROID" });
  });
});

describe("a widget draw that takes the pool under its threshold", () => {
  test("liquidity.low names the draw's loan and carries its program and channel, as liquidity.unavailable does", async () => {
    const m = await merchant();
    expect((await m.api("PUT", "/v1/sandbox/liquidity", { available: "1100.00" })).status).toBe(200);
    const drawn = await m.widget.draw(evmBorrower(), { amount: "200.00", tenureDays: 7, channel: "PARTNER_WEBVIEW" });
    expect(drawn.status).toBe(201);
    const lows = await m.api("GET", "/v1/events?type=liquidity.low");
    expect(lows.body.data).toHaveLength(1);
    expect(lows.body.data[0]).toMatchObject({
      data: { loanId: drawn.body.loan.id, pool: { headroom: "900.00" } },
      program: m.programId,
      channel: "PARTNER_WEBVIEW",
    });
  });
});

describe("wallet sessions: what typing an address discloses (item 8)", () => {
  /** A wallet of m's program with one open 600.00 loan, under a policy of at most one open loan. */
  async function walletWithOpenLoan(m: M, borrower: TestBorrower = evmBorrower()) {
    expect(
      (await m.dashboard("PUT", "/v1/policies", { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: 1, blockedWallets: [] })).status,
    ).toBe(200);
    expect((await m.widget.draw(borrower, { amount: "600.00", tenureDays: 7 })).status).toBe(201);
    return borrower;
  }

  test("a wallet the merchant blocked is ineligible (WALLET_BLOCKED) to any caller, session or not: the merchant's policy, which a declined accept tells anyway, not the wallet's balance", async () => {
    const m = await merchant();
    const borrower = evmBorrower();
    const policy = { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: null, blockedWallets: [borrower.address] };
    expect((await m.dashboard("PUT", "/v1/policies", policy)).status).toBe(200);
    const blocked = {
      walletAddress: borrower.address,
      eligible: false,
      reasons: [{ code: "WALLET_BLOCKED", message: "This wallet cannot borrow from this merchant" }],
    };
    expect((await m.post("/eligibility", { walletAddress: borrower.address })).body).toEqual(blocked);
    const session = { [SESSION]: await m.widget.session(borrower) };
    expect((await m.post("/eligibility", { walletAddress: borrower.address }, session)).body).toEqual(blocked);
    // Another wallet is not.
    expect((await m.post("/eligibility", { walletAddress: evmBorrower().address })).body).toMatchObject({ eligible: true, reasons: [] });
  });

  test("without a session: available = limit, no MAX_OPEN_LOANS, any amount quotes (the agreement is the line's own); with the wallet's session: exact", async () => {
    const m = await merchant();
    const borrower = await walletWithOpenLoan(m);
    const wallet = { walletAddress: borrower.address };

    const stranger = {
      boot: await m.post("/credit-line/bootstrap", wallet),
      elig: await m.post("/eligibility", wallet),
      quote: await m.post("/quote", { ...wallet, amount: "500.00", tenureDays: 7 }),
    };
    expect(stranger.boot.status).toBe(200);
    expect(stranger.boot.body).toMatchObject({
      creditLine: { walletAddress: borrower.address, status: "ACTIVE", limit: "1000.00", available: "1000.00" },
      requiresKyc: false,
      // DECISIONS.md: once the agreement is accepted, later draws skip it; bootstrap says so to every caller.
      agreementAccepted: true,
    });
    expect(stranger.elig.body).toEqual({ walletAddress: borrower.address, eligible: true, reasons: [] });
    expect(stranger.quote.status).toBe(200);
    expect(JSON.stringify(stranger)).not.toContain("400.00");

    const session = { [SESSION]: await m.widget.session(borrower) };
    const boot = await m.post("/credit-line/bootstrap", wallet, session);
    expect(boot.body).toMatchObject({ creditLine: { limit: "1000.00", available: "400.00" }, agreementAccepted: true });
    const elig = await m.post("/eligibility", wallet, session);
    expect(elig.body).toEqual({
      walletAddress: borrower.address,
      eligible: false,
      reasons: [{ code: "MAX_OPEN_LOANS", message: "At most 1 open loans at a time" }],
    });
    const quote = await m.post("/quote", { ...wallet, amount: "500.00", tenureDays: 7 }, session);
    expect(quote.status).toBe(400);
    expect(quote.body.message).toEqual(["amount: at most 400.00 is available on this credit line until its open loans are repaid"]);

    // The accept enforces the line whatever was quoted; its error may name what is available: the signer proved control.
    const over = await m.post("/accept", {
      ...wallet,
      amount: "500.00",
      tenureDays: 7,
      agreementChallengeId: stranger.quote.body.agreementChallenge.id,
      ...(await borrower.sign(stranger.quote.body.agreementChallenge.message)),
    });
    expect(over.status).toBe(400);
    expect(over.body.message).toEqual(["amount: at most 400.00 is available on this credit line until its open loans are repaid"]);
  });

  test("KYC state is the line's own, with or without a session: requiresKyc turns false once the merchant confirms (DECISIONS.md)", async () => {
    const m = await merchant();
    await m.dashboard("PUT", "/v1/settings", {
      requiresKycBeforeFunding: true,
      branding: { companyName: "Acme Pay", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null },
    });
    const borrower = evmBorrower();
    const session = { [SESSION]: await m.widget.session(borrower) };
    const line = (await m.post("/credit-line/bootstrap", { walletAddress: borrower.address }, session)).body.creditLine;
    // Before the merchant confirms: required, to everyone.
    expect((await m.post("/credit-line/bootstrap", { walletAddress: borrower.address })).body).toMatchObject({
      creditLine: { id: line.id },
      requiresKyc: true,
    });
    expect((await m.post("/eligibility", { walletAddress: borrower.address })).body.reasons.map((r: { code: string }) => r.code)).toEqual(["KYC_REQUIRED"]);
    // Another wallet of the program still needs it.
    expect((await m.post("/credit-line/bootstrap", { walletAddress: evmBorrower().address })).body.requiresKyc).toBe(true);
    expect((await m.api("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, { verified: true })).status).toBe(200);
    expect((await m.post("/credit-line/bootstrap", { walletAddress: borrower.address }, session)).body.requiresKyc).toBe(false);
    expect((await m.post("/eligibility", { walletAddress: borrower.address }, session)).body.reasons).toEqual([]);
    // A merchant backend (or page) asking without the wallet's session sees it done too.
    expect((await m.post("/credit-line/bootstrap", { walletAddress: borrower.address })).body).toMatchObject({
      creditLine: { id: line.id },
      requiresKyc: false,
    });
    expect((await m.post("/eligibility", { walletAddress: borrower.address })).body).toEqual({ walletAddress: borrower.address, eligible: true, reasons: [] });
  });

  test("a session is for its wallet and program only; forged, expired or garbage tokens are 401 with the error body", async () => {
    const m = await merchant();
    const x = await walletWithOpenLoan(m);
    const y = evmBorrower();
    const token = await m.widget.session(x);
    const b = await secondProgram(m);
    const unauthorized = async (res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ statusCode: 401, error: "Unauthorized" });
      expect(JSON.stringify(r.body)).not.toContain("400.00");
    };
    for (const path of ["/credit-line/bootstrap", "/eligibility"]) {
      await unauthorized(m.post(path, { walletAddress: y.address }, { [SESSION]: token }));
      await unauthorized(b.post(path, { walletAddress: x.address }, { [SESSION]: token }));
      const at = token.length - 10;
      const forged = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
      const paddingBits = `${token.slice(0, -1)}${String.fromCharCode(token.charCodeAt(token.length - 1) ^ 1)}`;
      await unauthorized(m.post(path, { walletAddress: x.address }, { [SESSION]: forged }));
      await unauthorized(m.post(path, { walletAddress: x.address }, { [SESSION]: paddingBits }));
      await unauthorized(m.post(path, { walletAddress: x.address }, { [SESSION]: "v1.99999999999999.abc" }));
      await unauthorized(m.post(path, { walletAddress: x.address }, { [SESSION]: "garbage" }));
    }
    await unauthorized(m.post("/quote", { walletAddress: y.address, amount: "100.00", tenureDays: 7 }, { [SESSION]: token }));
    // Valid for an hour on the tenant's clock.
    expect((await m.post("/credit-line/bootstrap", { walletAddress: x.address }, { [SESSION]: token })).body.creditLine.available).toBe("400.00");
    expect((await m.api("POST", "/v1/sandbox/clock/advance", { seconds: 3601 })).status).toBe(200);
    await unauthorized(m.post("/credit-line/bootstrap", { walletAddress: x.address }, { [SESSION]: token }));
  });

  test("a session challenge: the wallet's signature, this program and wallet, unexpired, single use; otherwise 400", async () => {
    const m = await merchant();
    const b = await secondProgram(m);
    const x = evmBorrower();
    const y = evmBorrower();
    const challenge = (await m.post("/wallet-session/challenge", { walletAddress: x.address })).body;
    expect(challenge).toEqual({ id: expect.any(String), message: expect.stringContaining(x.address), expiresAt: expect.any(String) });
    for (const part of ["Acme Pay", "POLYGON_AMOY", m.programId, "It is not a transaction"]) expect(challenge.message).toContain(part);
    const signed = { walletAddress: x.address, challengeId: challenge.id, ...(await x.sign(challenge.message)) };
    const fails = async (res: Promise<{ status: number; body: any }>, message: string) => {
      const r = await res;
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ statusCode: 400, message: [message], error: "Bad Request" });
    };
    await fails(
      m.post("/wallet-session", { ...signed, ...(await y.sign(challenge.message)) }),
      "walletSignature: is not the wallet's EIP-191 signature of the challenge message",
    );
    await fails(
      m.post("/wallet-session", { ...signed, walletAddress: y.address, ...(await y.sign(challenge.message)) }),
      "challengeId: no such challenge for this program and wallet",
    );
    await fails(b.post("/wallet-session", signed), "challengeId: no such challenge for this program and wallet");
    await fails(
      m.post("/wallet-session", { ...signed, challengeId: challenge.id.replace(/^./, (c: string) => (c === "a" ? "b" : "a")) }),
      "challengeId: no such challenge for this program and wallet",
    );
    await fails(m.post("/wallet-session", { ...signed, challengeId: "nonsense" }), "challengeId: no such challenge for this program and wallet");

    const opened = await m.post("/wallet-session", signed);
    expect(opened.status).toBe(200);
    expect(opened.body).toEqual({ token: expect.stringMatching(/^v1\./), expiresAt: expect.any(String) });
    expect(Date.parse(opened.body.expiresAt) - t.clock.now().getTime()).toBeGreaterThan(3_500_000);
    await fails(m.post("/wallet-session", signed), "challengeId: the challenge was already used");

    const late = (await m.post("/wallet-session/challenge", { walletAddress: x.address })).body;
    const lateSigned = { walletAddress: x.address, challengeId: late.id, ...(await x.sign(late.message)) };
    expect((await m.api("POST", "/v1/sandbox/clock/advance", { seconds: 301 })).status).toBe(200);
    await fails(m.post("/wallet-session", lateSigned), "challengeId: the challenge has expired");
    expect((await m.post("/wallet-session/challenge", { walletAddress: "0x123" })).status).toBe(400);
  });

  test("a used session challenge of a live program stays used after a sandbox program of the tenant, its clock ahead, opened a session (its prune deleted the live record, and the used challenge opened a second session)", async () => {
    const m = await merchant();
    await t.db.update(tenants).set({ certifiedAt: new Date(), mode: "live" }).where(eq(tenants.id, m.owner.tenantId));
    const live = await m.dashboard("POST", "/v1/widget-programs", {
      name: "Live",
      merchantConfigId: m.merchantConfigId,
      allowedOrigins: [ORIGIN],
      mode: "live",
    });
    expect(live.status).toBe(201);
    const liveCalls = embed(live.body.embedKey, live.body.id);
    // The sandbox clock a day ahead (any sandbox test run moves it).
    expect((await m.api("POST", "/v1/sandbox/clock/advance", { seconds: 86_400 })).status).toBe(200);

    const x = evmBorrower();
    const challenge = (await liveCalls.post("/wallet-session/challenge", { walletAddress: x.address })).body;
    const signed = { walletAddress: x.address, challengeId: challenge.id, ...(await x.sign(challenge.message)) };
    expect((await liveCalls.post("/wallet-session", signed)).status).toBe(200);
    expect((await liveCalls.post("/wallet-session", signed)).status).toBe(400);

    const y = evmBorrower();
    const sandboxChallenge = (await m.post("/wallet-session/challenge", { walletAddress: y.address })).body;
    expect(
      (await m.post("/wallet-session", { walletAddress: y.address, challengeId: sandboxChallenge.id, ...(await y.sign(sandboxChallenge.message)) })).status,
    ).toBe(200);

    const replay = await liveCalls.post("/wallet-session", signed);
    expect(replay.body).toEqual({ statusCode: 400, message: ["challengeId: the challenge was already used"], error: "Bad Request" });
  });

  test("a TON wallet opens its session with a TON Connect signData signature", async () => {
    const m = await merchant();
    const config = await m.dashboard("POST", "/v1/merchant-configs", {
      network: "TON",
      stablecoin: "USDT",
      tenures: [3, 7],
      minTicket: "10.00",
      maxTicket: "500.00",
      gracePeriodDays: 3,
      processingFee: { type: "FIXED", value: "1.00" },
      lateFee: { type: "FIXED", value: "0.50" },
    });
    const program = await m.dashboard("POST", "/v1/widget-programs", { name: "TON", merchantConfigId: config.body.id, allowedOrigins: [ORIGIN] });
    const ton = embed(program.body.embedKey, program.body.id);
    const borrower = tonBorrower();
    expect((await ton.widget.draw(borrower, { amount: "100.00", tenureDays: 3 })).status).toBe(201);
    const token = await ton.widget.session(borrower);
    expect((await ton.post("/credit-line/bootstrap", { walletAddress: borrower.address }, { [SESSION]: token })).body.creditLine).toMatchObject({
      limit: "500.00",
      available: "400.00",
    });
    const evil = tonBorrower("evil.example");
    const challenge = (await ton.post("/wallet-session/challenge", { walletAddress: evil.address })).body;
    const wrongDomain = await ton.post("/wallet-session", { walletAddress: evil.address, challengeId: challenge.id, ...(await evil.sign(challenge.message)) });
    expect(wrongDomain.status).toBe(400);
    expect(wrongDomain.body.message[0]).toStartWith("domain:");
  });

  test("browsers may send the session header: the preflight allows it", async () => {
    const m = await merchant();
    const preflight = await e.request("OPTIONS", `/v1/embed/${m.embedKey}/credit-line/bootstrap`, {
      headers: { origin: ORIGIN, "access-control-request-headers": "content-type, x-svc-wallet-session" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain(SESSION);
  });
});
