import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evmBorrower, widgetCalls } from "../../shared/testing/widget-borrower.ts";
import { signUpMerchant, startTestStack, type TestStack } from "./integration.ts";

/**
 * Issue 10's embed attacks (items 1 and 8) replayed against the real workers
 * in workerd: the embed worker's accept shares D1 and the api worker's loan
 * Durable Objects with POST /v1/loans, its events go through the real Queue to
 * the webhooks worker, and the tenant's sandbox clock expires sessions.
 */
let stack: TestStack;
const servers: { stop(): void }[] = [];
beforeAll(async () => {
  stack = await startTestStack({
    ratelimits: { IP_LIMITER: { limit: 100_000 }, API_KEY_LIMITER: { limit: 100_000 } },
    vars: { WEBHOOK_RETRY_DELAYS_SECONDS: "1,1" },
  });
}, 90_000);
afterAll(async () => {
  for (const s of servers) s.stop();
  await stack?.dispose();
});

const SESSION = "x-svc-wallet-session";

/** A merchant with its default program's embed calls (server-side: no Origin), and a second program of the same configuration. */
async function merchant() {
  const m = await signUpMerchant(stack, "Embed Abuse");
  const program = (await m.dashboard("/v1/me")).body.widgetPrograms[0];
  const calls = (embedKey: string) => {
    const post = (path: string, json: unknown, headers: Record<string, string> = {}) => stack.fetch(`/v1/embed/${embedKey}${path}`, { json, headers });
    return {
      embedKey,
      post,
      get: (path: string) => stack.fetch(path.startsWith("/embed/") ? `${stack.embedUrl}${path}` : `/v1/embed/${embedKey}${path}`),
      widget: widgetCalls(post),
    };
  };
  return {
    ...m,
    programId: program.id as string,
    merchantConfigId: program.merchantConfigId as string,
    ...calls(m.embedKey),
    async secondProgram() {
      const res = await m.dashboard("/v1/widget-programs", { json: { name: "Second", merchantConfigId: program.merchantConfigId, allowedOrigins: [] } });
      expect(res.status).toBe(201);
      return { programId: res.body.id as string, ...calls(res.body.embedKey as string) };
    },
    apiLoan: (over: Record<string, unknown> = {}) =>
      m.api("/v1/loans", {
        json: {
          loanProductId: m.loanProductId,
          borrowerRef: "customer-7",
          borrowerWalletAddress: privateKeyToAccount(generatePrivateKey()).address,
          chain: "POLYGON_AMOY",
          principalAmount: "100.00",
          idempotencyKey: crypto.randomUUID(),
          ...over,
        },
      }),
  };
}

const MERCHANT_FIELDS = ["borrowerRef", "borrowerId", "idempotencyKey", "loanProductId", "kycGate"];
function expectRedacted(loan: Record<string, any>) {
  for (const field of MERCHANT_FIELDS) expect(loan).not.toHaveProperty(field);
  for (const field of ["reviewedBy", "reviewedAt", "reviewNote", "policyVersion"]) expect(loan.decision ?? {}).not.toHaveProperty(field);
}

describe("idempotency squatting through the widget (item 1)", () => {
  test("accept with K, then the merchant's POST /v1/loans with K: 201 and its own loan; the widget's retry: 200 with its own", async () => {
    const m = await merchant();
    const body = await m.widget.acceptBody(evmBorrower(), { amount: "100.00", tenureDays: 7, idempotencyKey: "order-1002" });
    const squat = await m.widget.accept(body);
    expect(squat.status).toBe(201);
    const real = await m.apiLoan({ idempotencyKey: "order-1002", principalAmount: "250.00" });
    expect(real.status).toBe(201);
    expect(real.body).toMatchObject({ borrowerRef: "customer-7", principalAmount: "250.00", program: null });
    expect(real.body.id).not.toBe(squat.body.loan.id);
    expect((await m.apiLoan({ idempotencyKey: "order-1002" })).body.id).toBe(real.body.id);
    const retry = await m.widget.accept(body);
    expect(retry.status).toBe(200);
    expect(retry.body.loan.id).toBe(squat.body.loan.id);
  });

  test("the merchant's loan with K first: accept with K makes its own loan (201) and answers nothing of the merchant's", async () => {
    const m = await merchant();
    const merchantLoan = await m.apiLoan({ idempotencyKey: "order-9", borrowerRef: "vip-customer-0042" });
    expect(merchantLoan.status).toBe(201);
    const res = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, idempotencyKey: "order-9" });
    expect(res.status).toBe(201);
    expect(res.body.loan.id).not.toBe(merchantLoan.body.id);
    expect(res.body.loan).toMatchObject({ program: m.programId, status: "ACTIVE" });
    expectRedacted(res.body.loan);
    expect(JSON.stringify(res.body)).not.toContain("vip-customer-0042");
  });
});

describe("a challenge elsewhere (tests that would not catch a broken rule before)", () => {
  test("a challenge from program A used at program B, or at another tenant: 400, no loan", async () => {
    const m = await merchant();
    const b = await m.secondProgram();
    const other = await merchant();
    const fromA = await m.widget.acceptBody(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    for (const target of [b, other]) {
      const res = await target.post("/accept", fromA);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: no such challenge for this program"], error: "Bad Request" });
    }
    expect((await m.api("/v1/loans")).body.data).toEqual([]);
    expect((await other.api("/v1/loans")).body.data).toEqual([]);
  });
});

describe("embed privacy: loans (item 8)", () => {
  test("another tenant's, another program's and an API loan: 404 on loans/:id, repayment-instructions and the hosted repay page", async () => {
    const m = await merchant();
    const b = await m.secondProgram();
    const other = await merchant();
    const own = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofB = await b.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofOther = await other.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7 });
    const ofApi = await m.apiLoan();
    expect([own.status, ofB.status, ofOther.status, ofApi.status]).toEqual([201, 201, 201, 201]);
    expect((await m.get(`/loans/${own.body.loan.id}`)).status).toBe(200);
    // Its own loan: the embed worker serves the same instructions as the api's POST /v1/loans/:id/repay.
    const viaApi = await m.api(`/v1/loans/${own.body.loan.id}/repay`, { method: "POST" });
    expect(viaApi.status).toBe(200);
    expect((await m.get(`/loans/${own.body.loan.id}/repayment-instructions`)).body).toEqual(viaApi.body);
    expect((await m.get(`/embed/${m.embedKey}/repay/${own.body.loan.id}`)).status).toBe(200);
    for (const id of [ofB.body.loan.id, ofOther.body.loan.id, ofApi.body.id]) {
      const loan = await m.get(`/loans/${id}`);
      expect(loan.status).toBe(404);
      expect(loan.body).toEqual({ statusCode: 404, message: "Loan not found", error: "Not Found" });
      expect((await m.get(`/loans/${id}/repayment-instructions`)).body).toEqual({ statusCode: 404, message: "Loan not found", error: "Not Found" });
      expect((await m.get(`/embed/${m.embedKey}/repay/${id}`)).status).toBe(404);
    }
  });
});

describe("events of a widget loan", () => {
  test("the delivered webhooks and GET /v1/events carry the loan's program and channel", async () => {
    const m = await merchant();
    const received: any[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        received.push(JSON.parse(await req.text()));
        return new Response("ok");
      },
    });
    servers.push(server);
    expect((await m.dashboard("/v1/webhooks", { json: { url: `http://127.0.0.1:${server.port}/hooks`, events: ["*"] } })).status).toBe(201);
    const drawn = await m.widget.draw(evmBorrower(), { amount: "100.00", tenureDays: 7, channel: "IOS" });
    expect(drawn.status).toBe(201);
    const loanId = drawn.body.loan.id as string;
    const ofLoan = () => received.filter((env) => env.data?.loan?.id === loanId);
    for (let i = 0; i < 200 && ofLoan().length < 3; i++) await Bun.sleep(100);
    expect(
      ofLoan()
        .map((env) => env.type)
        .sort(),
    ).toEqual(["loan.application_submitted", "loan.decision", "loan.funded"]);
    for (const env of ofLoan()) expect(env).toMatchObject({ program: m.programId, channel: "IOS" });
    const listed = await m.api(`/v1/events?loanId=${loanId}`);
    expect(listed.body.data).toHaveLength(3);
    for (const env of listed.body.data) expect(env).toMatchObject({ program: m.programId, channel: "IOS" });
  });
});

describe("embed privacy: another wallet's balance (item 8)", () => {
  test("without a session nothing of the wallet's open loans; with its session, exact; a session is its wallet's and program's, and expires", async () => {
    const m = await merchant();
    const b = await m.secondProgram();
    expect(
      (
        await m.dashboard("/v1/policies", {
          method: "PUT",
          json: { requireKycVerified: false, manualReviewAbove: null, maxOpenLoansPerBorrower: 1, blockedWallets: [] },
        })
      ).status,
    ).toBe(200);
    const x = evmBorrower();
    expect((await m.widget.draw(x, { amount: "600.00", tenureDays: 7 })).status).toBe(201);
    const wallet = { walletAddress: x.address };

    const boot = await m.post("/credit-line/bootstrap", wallet);
    // Its open principal is not shown; its accepted agreement is (DECISIONS.md: later draws skip it).
    expect(boot.body).toMatchObject({ creditLine: { limit: "1000.00", available: "1000.00" }, agreementAccepted: true });
    expect((await m.post("/eligibility", wallet)).body).toEqual({ walletAddress: x.address, eligible: true, reasons: [] });
    expect((await m.post("/quote", { ...wallet, amount: "500.00", tenureDays: 7 })).status).toBe(200);

    const token = await m.widget.session(x);
    const session = { [SESSION]: token };
    expect((await m.post("/credit-line/bootstrap", wallet, session)).body).toMatchObject({ creditLine: { available: "400.00" }, agreementAccepted: true });
    expect((await m.post("/eligibility", wallet, session)).body.reasons.map((r: { code: string }) => r.code)).toEqual(["MAX_OPEN_LOANS"]);
    expect((await m.post("/quote", { ...wallet, amount: "500.00", tenureDays: 7 }, session)).status).toBe(400);

    const y = evmBorrower();
    // One character of the MAC changed (in the middle: its last character also holds padding bits).
    const at = token.length - 10;
    const forged = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
    for (const [call, headers] of [
      [() => m.post("/credit-line/bootstrap", { walletAddress: y.address }, session), "another wallet"],
      [() => b.post("/credit-line/bootstrap", wallet, session), "another program"],
      [() => m.post("/credit-line/bootstrap", wallet, { [SESSION]: forged }), "forged"],
    ] as const) {
      const res = await call();
      expect({ headers, status: res.status, error: res.body.error }).toEqual({ headers, status: 401, error: "Unauthorized" });
    }
    expect((await m.api("/v1/sandbox/clock/advance", { json: { seconds: 3601 } })).status).toBe(200);
    expect((await m.post("/credit-line/bootstrap", wallet, session)).status).toBe(401);
  });

  test("the embed worker's CORS lets the widget send the session header", async () => {
    const m = await merchant();
    const origin = "http://localhost:5199";
    const program = (await m.dashboard("/v1/me")).body.widgetPrograms[0];
    await m.dashboard(`/v1/widget-programs/${program.id}`, {
      method: "PUT",
      json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [origin] },
    });
    const preflight = await stack.fetch(`/v1/embed/${m.embedKey}/quote`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-svc-wallet-session" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain(SESSION);
  });
});
