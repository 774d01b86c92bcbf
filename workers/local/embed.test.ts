import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evmBorrower, widgetCalls } from "../../shared/testing/widget-borrower.ts";
import { startTestStack, type TestStack } from "./integration.ts";

/**
 * The embed API on workerd: `/v1/embed/*` on the base URL reaches the embed
 * worker, whose draws go through the api worker's Durable Objects (loan
 * writer, agreement challenges) by script_name.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ ratelimits: { IP_LIMITER: { limit: 1000 } } });
}, 60_000);
afterAll(() => stack?.dispose());

test("quote → signed accept makes a funded loan with program and channel; a disallowed origin gets 403", async () => {
  const ORIGIN = "http://localhost:5173";
  const signup = await stack.fetch("/v1/auth/signup", {
    json: { email: `embed.${Date.now()}@merchant.example`, password: "correct horse battery", companyName: "Embed Co" },
  });
  const token = signup.body.accessToken as string;
  const me = await stack.fetch("/v1/me", { headers: { authorization: `Bearer ${token}` } });
  const program = me.body.widgetPrograms[0];
  const put = await stack.fetch(`/v1/widget-programs/${program.id}`, {
    method: "PUT",
    json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: { authorization: `Bearer ${token}` },
  });
  expect(put.status).toBe(200);
  const base = `/v1/embed/${program.embedKey}`;
  const denied = await stack.fetch(`${base}/config`, { headers: { origin: "https://evil.example" } });
  expect(denied.status).toBe(403);
  expect(denied.headers.get("x-svc-worker")).toBe("embed");

  const account = privateKeyToAccount(generatePrivateKey());
  const quote = await stack.fetch(`${base}/quote`, { json: { walletAddress: account.address, amount: "100.00", tenureDays: 3 }, headers: { origin: ORIGIN } });
  expect(quote.status).toBe(200);
  expect(quote.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  const signature = await account.signMessage({ message: quote.body.agreementChallenge.message });
  const body = {
    walletAddress: account.address,
    amount: "100.00",
    tenureDays: 3,
    agreementChallengeId: quote.body.agreementChallenge.id,
    walletSignature: signature,
    channel: "PARTNER_WEBVIEW",
  };
  const accepts = await Promise.all(
    Array.from({ length: 5 }, (_, i) => stack.fetch(`${base}/accept`, { json: { ...body, idempotencyKey: `a${i}` }, headers: { origin: ORIGIN } })),
  );
  expect(accepts.filter((r) => r.status === 201)).toHaveLength(1);
  expect(accepts.every((r) => r.status < 500)).toBe(true);
  const loan = accepts.find((r) => r.status === 201)!.body.loan;
  expect(loan).toMatchObject({ status: "ACTIVE", program: program.id, channel: "PARTNER_WEBVIEW" });
  const status = await stack.fetch(`${base}/loans/${loan.id}`, { headers: { origin: ORIGIN } });
  expect(status.body.loan).toMatchObject({ id: loan.id, status: "ACTIVE" });
});

test("on D1: concurrent draws of one wallet cannot overdraw its credit line (the guarded loan insert)", async () => {
  const ORIGIN = "http://localhost:5174";
  const signup = await stack.fetch("/v1/auth/signup", {
    json: { email: `line.${Date.now()}@merchant.example`, password: "correct horse battery", companyName: "Line Co" },
  });
  const token = signup.body.accessToken as string;
  const program = (await stack.fetch("/v1/me", { headers: { authorization: `Bearer ${token}` } })).body.widgetPrograms[0];
  await stack.fetch(`/v1/widget-programs/${program.id}`, {
    method: "PUT",
    json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: { authorization: `Bearer ${token}` },
  });
  const base = `/v1/embed/${program.embedKey}`;
  const account = privateKeyToAccount(generatePrivateKey());
  const bodies = await Promise.all(
    Array.from({ length: 5 }, async () => {
      const q = await stack.fetch(`${base}/quote`, { json: { walletAddress: account.address, amount: "300.00", tenureDays: 7 }, headers: { origin: ORIGIN } });
      expect(q.status).toBe(200);
      const walletSignature = await account.signMessage({ message: q.body.agreementChallenge.message });
      return {
        walletAddress: account.address,
        amount: "300.00",
        tenureDays: 7,
        agreementChallengeId: q.body.agreementChallenge.id,
        walletSignature,
        channel: "WEB",
      };
    }),
  );
  const results = await Promise.all(bodies.map((json) => stack.fetch(`${base}/accept`, { json, headers: { origin: ORIGIN } })));
  expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 400, 400]);
  // What the line has available is the wallet's own business: it shows with the wallet's session.
  const post = (path: string, json: unknown, headers: Record<string, string> = {}) =>
    stack.fetch(`${base}${path}`, { json, headers: { origin: ORIGIN, ...headers } });
  const session = await widgetCalls(post).session(evmBorrower(account));
  const line = await post("/credit-line/bootstrap", { walletAddress: account.address }, { "x-svc-wallet-session": session });
  expect(line.body.creditLine).toMatchObject({ limit: "1000.00", available: "100.00" });
});
