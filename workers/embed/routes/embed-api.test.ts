import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keyPairFromSeed, sign } from "@ton/crypto";
import { WalletContractV4 } from "@ton/ton";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { events } from "../../../db/schema/events.ts";
import { borrowers } from "../../../db/schema/borrowers.ts";
import { creditLines } from "../../../db/schema/credit-lines.ts";
import { loans } from "../../../db/schema/loans.ts";
import { widgetPrograms } from "../../../db/schema/widget-programs.ts";
import { createLoan as createLoanVerb } from "../../../shared/loans/create-loan.ts";
import { loanCreation, newWallet } from "../../../shared/testing/loan-fixtures.ts";
import { tenantSettings } from "../../../db/schema/tenant-settings.ts";
import { tonConnectSignDataTextHash } from "../../../shared/domain/wallet-signatures.ts";
import { createTestApp, type TestApp } from "../../../shared/testing/harness.ts";
import { bearer, createKey, signUpTenant } from "../../../shared/testing/fixtures.ts";
import type { EmbedEnv } from "../env.ts";
import { createEmbedTestApp } from "../testing/harness.ts";
import { evmBorrower, widgetCalls } from "../../../shared/testing/widget-borrower.ts";

const ORIGIN = "https://shop.example";
let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
});
afterAll(() => t.close());

/** A tenant whose default program allows ORIGIN. */
async function merchant() {
  const owner = await signUpTenant(t);
  const { key } = await createKey(t, owner.token);
  const me = (await t.request("GET", "/v1/me", { headers: { "x-api-key": key } })).body;
  const program = me.widgetPrograms[0];
  await t.request("PUT", `/v1/widget-programs/${program.id}`, {
    body: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [ORIGIN] },
    headers: bearer(owner.token),
  });
  return { owner, key, programId: program.id as string, embedKey: program.embedKey as string, merchantConfigId: program.merchantConfigId as string };
}
type M = Awaited<ReturnType<typeof merchant>>;
const call = (m: M, method: string, path: string, body?: unknown, origin: string | null = ORIGIN, headers: Record<string, string> = {}) =>
  e.request(method, `/v1/embed/${m.embedKey}${path}`, { body, headers: { ...(origin ? { origin } : {}), ...headers } });
/** The wallet-session header of an EVM account for m's program: the exact answers about its own credit line. */
const sessionOf = async (m: M, account: ReturnType<typeof privateKeyToAccount>) => ({
  "x-svc-wallet-session": await widgetCalls((path, body) => call(m, "POST", path, body)).session(evmBorrower(account)),
});

/** The tenant's setting requiresKycBeforeFunding on (widget draws need the merchant's KYC confirmation of the line). */
const requireKycBeforeFunding = (m: M) =>
  t.request("PUT", "/v1/settings", {
    body: { requiresKycBeforeFunding: true, branding: { companyName: "Acme Pay", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null } },
    headers: bearer(m.owner.token),
  });

async function quote(m: M, wallet: string, amount = "100.00", tenureDays = 7) {
  const res = await call(m, "POST", "/quote", { walletAddress: wallet, amount, tenureDays });
  expect(res.status).toBe(200);
  return res.body;
}

/** An accept body for a quote (a fresh one of 100.00 over 7 days unless given), signed by the wallet. */
async function signedAccept(m: M, account: ReturnType<typeof privateKeyToAccount>, given?: Awaited<ReturnType<typeof quote>>) {
  const q = given ?? (await quote(m, account.address));
  return {
    walletAddress: account.address,
    amount: q.amount,
    tenureDays: q.tenureDays,
    agreementChallengeId: q.agreementChallenge.id,
    walletSignature: await account.signMessage({ message: q.agreementChallenge.message }),
    channel: "WEB",
  };
}

describe("access", () => {
  test("unknown key 404; disallowed origin 403 without a CORS grant; allowed origin granted exactly; server calls pass", async () => {
    const m = await merchant();
    const unknown = await e.request("GET", "/v1/embed/ek_test_AAAAAAAAAAAAAAAAAAAAAAAA/config");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ statusCode: 404, message: "Embed key not found", error: "Not Found" });
    const denied = await call(m, "GET", "/config", undefined, "https://evil.example");
    expect(denied.status).toBe(403);
    expect(denied.headers.get("access-control-allow-origin")).toBeNull();
    const ok = await call(m, "GET", "/config");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(ok.headers.get("access-control-allow-credentials")).toBeNull();
    expect(ok.headers.get("vary")).toContain("Origin");
    const server = await call(m, "GET", "/config", undefined, null);
    expect(server.status).toBe(200);
    expect(server.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await call(m, "OPTIONS", "/quote");
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
  });

  test("config shows branding, Powered by, rail and limits", async () => {
    const m = await merchant();
    const res = await call(m, "GET", "/config");
    expect(res.body).toMatchObject({
      program: { id: m.programId, name: "Default program" },
      poweredBy: "Powered by svc credit",
      network: "POLYGON",
      stablecoin: "USDC",
      chain: "POLYGON_AMOY",
      tenures: [3, 7, 15],
      minAmount: "10.00",
      maxAmount: "1000.00",
      processingFee: { type: "PERCENTAGE", value: "2.00" },
      lateFee: { type: "FIXED", value: "1.00" },
      gracePeriodDays: 3,
    });
    expect(res.body.branding.companyName).toBe("Acme Pay");
  });

  test("rate limited per embed key and client IP", async () => {
    const limited = createEmbedTestApp(t, { limit: 2 });
    const m = await merchant();
    const get = () => limited.request("GET", `/v1/embed/${m.embedKey}/config`, { headers: { "cf-connecting-ip": "203.0.113.9" } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    const third = await get();
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("60");
  });

  test("a wrong method on an embed route: 405 with Allow and the error body, as on the api worker (it was 404); an unknown path stays 404", async () => {
    const m = await merchant();
    const wrong = await call(m, "DELETE", "/config");
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual({ statusCode: 405, message: `Method DELETE is not allowed on /v1/embed/${m.embedKey}/config`, error: "Method Not Allowed" });
    expect(wrong.headers.get("allow")).toBe("GET");
    const page = await e.request("POST", `/embed/${m.embedKey}`);
    expect(page.status).toBe(405);
    expect(page.headers.get("allow")).toBe("GET");
    const unknown = await call(m, "GET", "/no-such-thing");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ statusCode: 404, message: `No route for GET /v1/embed/${m.embedKey}/no-such-thing`, error: "Not Found" });
  });

  test("a refused origin spends the key and IP's budget too: 403s, then 429, never an unlimited flood of program reads", async () => {
    const limited = createEmbedTestApp(t, { limit: 3, missLimit: 3 });
    const m = await merchant();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await limited.request("POST", `/v1/embed/${m.embedKey}/quote`, {
        body: { walletAddress: privateKeyToAccount(generatePrivateKey()).address, amount: "100.00", tenureDays: 7 },
        headers: { origin: "https://evil.example", "cf-connecting-ip": "198.51.100.7" },
      });
      expect(res.body.statusCode).toBe(res.status);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([403, 403, 403, 429, 429, 429]);
  });
});

describe("limits", () => {
  const TOO_LARGE = { statusCode: 413, message: "Request body exceeds 65536 bytes", error: "Payload Too Large" };

  test("a body over 64 KiB is refused with 413 before it is parsed, with or without content-length, on every embed route", async () => {
    const m = await merchant();
    const huge = JSON.stringify({ walletAddress: "0x" + "a".repeat(40), amount: "10.00", tenureDays: 7, padding: "x".repeat(2 * 1024 * 1024) });
    for (const path of ["/quote", "/accept", "/eligibility", "/credit-line/bootstrap"]) {
      const res = await e.app.request(
        `/v1/embed/${m.embedKey}${path}`,
        { method: "POST", headers: { "content-type": "application/json", "content-length": String(huge.length) }, body: huge },
        {} as EmbedEnv,
      );
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(TOO_LARGE);
    }
    // Streamed, without a length: counted as it arrives.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 32; i++) controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await e.app.request(
      `/v1/embed/${m.embedKey}/quote`,
      { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit,
      {} as EmbedEnv,
    );
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual(TOO_LARGE);
    // Unknown keys too: the size is checked first.
    const unknown = await e.app.request(
      "/v1/embed/ek_test_AAAAAAAAAAAAAAAAAAAAAAAA/quote",
      { method: "POST", headers: { "content-type": "application/json", "content-length": String(huge.length) }, body: huge },
      {} as EmbedEnv,
    );
    expect(unknown.status).toBe(413);
  });

  test("a body that is not application/json is refused with 415 on every embed call with a body, and the document says so", async () => {
    const m = await merchant();
    const doc = (await e.request("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    const withBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.requestBody)
        .map(([method, op]) => ({ path, method, op })),
    );
    expect(withBody.length).toBeGreaterThanOrEqual(4);
    for (const { path, method, op } of withBody) {
      const url = path.replace("{embedKey}", m.embedKey).replace(/\{\w+\}/g, "00000000-0000-4000-8000-000000000000");
      const res = await e.app.request(url, { method: method.toUpperCase(), headers: { "content-type": "text/plain" }, body: "{}" }, {} as EmbedEnv);
      expect({ path, status: res.status, body: await res.json() }).toEqual({
        path,
        status: 415,
        body: expect.objectContaining({ statusCode: 415, error: "Unsupported Media Type" }),
      });
      expect(Object.keys(op.responses), path).toEqual(expect.arrayContaining(["413", "415"]));
    }
  });

  test("unknown embed keys spend the client IP's miss budget: then 429 for every embed call and page from it, before any lookup", async () => {
    const limited = createEmbedTestApp(t, { missLimit: 3 });
    const m = await merchant();
    const from = (ip: string, path: string) => limited.request("GET", path, { headers: { "cf-connecting-ip": ip } });
    const ip = "203.0.113.44";
    for (let i = 0; i < 3; i++) expect((await from(ip, `/v1/embed/ek_test_guess${i}AAAAAAAAAAAAAAAAAAA/config`)).status).toBe(404);
    // The miss that exhausts the budget is answered 429, and so is everything after it.
    const exhausted = await from(ip, "/v1/embed/ek_test_guess9AAAAAAAAAAAAAAAAAAA/config");
    expect(exhausted.status).toBe(429);
    expect(exhausted.headers.get("retry-after")).toBe("60");
    expect(exhausted.body).toEqual({ statusCode: 429, message: "Too many requests; retry later", error: "Too Many Requests" });
    expect((await from(ip, `/v1/embed/${m.embedKey}/config`)).status).toBe(429);
    expect((await from(ip, `/embed/${m.embedKey}`)).status).toBe(429);
    // Another address is not affected, and its misses are its own.
    expect((await from("203.0.113.45", `/v1/embed/${m.embedKey}/config`)).status).toBe(200);
    expect((await from("203.0.113.45", "/embed/ek_test_guessAAAAAAAAAAAAAAAAAAAA")).status).toBe(404);
  });

  test("unknown keys on the pages count as misses too", async () => {
    const limited = createEmbedTestApp(t, { missLimit: 2 });
    const ip = { "cf-connecting-ip": "203.0.113.46" };
    expect((await limited.request("GET", "/embed/ek_test_nopeAAAAAAAAAAAAAAAAAAAA", { headers: ip })).status).toBe(404);
    expect((await limited.request("GET", "/embed/ek_test_nopeAAAAAAAAAAAAAAAAAAAA/tonconnect-manifest.json", { headers: ip })).status).toBe(404);
    expect((await limited.request("GET", `/embed/ek_test_nopeAAAAAAAAAAAAAAAAAAAA/repay/${crypto.randomUUID()}`, { headers: ip })).status).toBe(429);
    expect((await limited.request("GET", "/embed/ek_test_nopeAAAAAAAAAAAAAAAAAAAA", { headers: ip })).status).toBe(429);
  });

  test("the widget page, the repay page and the TON Connect manifest are limited per embed key and client IP", async () => {
    const limited = createEmbedTestApp(t, { limit: 3 });
    const m = await merchant();
    const other = await merchant();
    const page = (key: string, path: string, ip = "203.0.113.50") => limited.request("GET", `/embed/${key}${path}`, { headers: { "cf-connecting-ip": ip } });
    expect((await page(m.embedKey, "")).status).toBe(200);
    expect((await page(m.embedKey, "/tonconnect-manifest.json")).status).toBe(200);
    expect((await page(m.embedKey, `/repay/${crypto.randomUUID()}`)).status).toBe(404); // counted, then not found
    for (const path of ["", "/tonconnect-manifest.json", `/repay/${crypto.randomUUID()}`]) {
      const res = await page(m.embedKey, path);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("60");
    }
    // Per key and per IP; the embed API keeps its own count.
    expect((await page(other.embedKey, "")).status).toBe(200);
    expect((await page(m.embedKey, "", "203.0.113.51")).status).toBe(200);
    expect((await limited.request("GET", `/v1/embed/${m.embedKey}/config`, { headers: { "cf-connecting-ip": "203.0.113.50" } })).status).toBe(200);
  });
});

describe("eligibility and credit line", () => {
  test("eligibility, bootstrap, and the merchant's KYC confirmation (with the wallet's session)", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = account.address;
    const session = await sessionOf(m, account);
    const elig = await call(m, "POST", "/eligibility", { walletAddress: wallet.toLowerCase() }, ORIGIN, session);
    expect(elig.body).toEqual({ walletAddress: wallet, eligible: true, reasons: [] });
    const bad = await call(m, "POST", "/eligibility", { walletAddress: "0x123" });
    expect(bad.status).toBe(400);
    expect(bad.body.message[0]).toStartWith("walletAddress:");

    await requireKycBeforeFunding(m);
    const boot = await call(m, "POST", "/credit-line/bootstrap", { walletAddress: wallet }, ORIGIN, session);
    expect(boot.body).toMatchObject({
      creditLine: { walletAddress: wallet, status: "ACTIVE", limit: "1000.00", available: "1000.00" },
      requiresKyc: true,
      agreementAccepted: false,
    });
    expect((await call(m, "POST", "/eligibility", { walletAddress: wallet }, ORIGIN, session)).body.reasons.map((r: { code: string }) => r.code)).toEqual([
      "KYC_REQUIRED",
    ]);

    // What people read later (the dashboard, e-mails) is plain text: 400 naming the field, and nothing confirmed.
    for (const field of ["borrowerRef", "merchantUserId", "reference"]) {
      const refused = await t.request("POST", `/v1/credit-lines/${boot.body.creditLine.id}/kyc-confirmation`, {
        body: { verified: true, [field]: "a\u202eb" },
        headers: { "x-api-key": m.key },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toEqual([`${field}: must not contain control, invisible or bidirectional formatting characters, or line separators`]);
    }
    expect((await call(m, "POST", "/credit-line/bootstrap", { walletAddress: wallet }, ORIGIN, session)).body.requiresKyc).toBe(true);
    const confirm = await t.request("POST", `/v1/credit-lines/${boot.body.creditLine.id}/kyc-confirmation`, {
      body: { verified: true, merchantUserId: "ops-1", reference: "kyc-9", borrowerRef: "customer-9" },
      headers: { "x-api-key": m.key },
    });
    expect(confirm.status).toBe(200);
    expect(confirm.body).toMatchObject({ borrowerRef: "customer-9", requiresKyc: false });
    const again = await call(m, "POST", "/credit-line/bootstrap", { walletAddress: wallet }, ORIGIN, session);
    expect(again.body.requiresKyc).toBe(false);
    expect((await call(m, "POST", "/eligibility", { walletAddress: wallet }, ORIGIN, session)).body).toEqual({
      walletAddress: wallet,
      eligible: true,
      reasons: [],
    });
    const other = await merchant();
    expect(
      (
        await t.request("POST", `/v1/credit-lines/${boot.body.creditLine.id}/kyc-confirmation`, {
          body: { verified: true },
          headers: { "x-api-key": other.key },
        })
      ).status,
    ).toBe(404);
  });
});

describe("a returning borrower's open loans", () => {
  test("bootstrap with the wallet's session lists the line's loans the borrower may repay (ACTIVE, DEFAULTED), oldest first; without it, none (a fully drawn line said 'repay your open loan' with no way there)", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const first = await call(m, "POST", "/accept", await signedAccept(m, account, await quote(m, account.address, "600.00")));
    const second = await call(m, "POST", "/accept", await signedAccept(m, account, await quote(m, account.address, "400.00")));
    expect([first.status, second.status]).toEqual([201, 201]);
    const withSession = await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address }, ORIGIN, await sessionOf(m, account));
    expect(withSession.body.creditLine.available).toBe("0.00");
    expect(withSession.body.repayableLoans).toEqual([
      { id: first.body.loan.id, status: "ACTIVE", dueAt: first.body.loan.dueAt },
      { id: second.body.loan.id, status: "ACTIVE", dueAt: second.body.loan.dueAt },
    ]);
    expect((await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address })).body.repayableLoans).toEqual([]);
  });
});

describe("quote and accept (EVM)", () => {
  test("a signed draw becomes a funded loan recording program and channel; the line remembers the agreement", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address, "100.00", 7);
    expect(q).toMatchObject({ amount: "100.00", tenureDays: 7, processingFee: "2.00", totalDue: "102.00" });
    for (const part of ["Acme Pay", account.address, "100.00 USDC", "7 days", "POLYGON_AMOY", "102.00 USDC", q.agreementChallenge.id])
      expect(q.agreementChallenge.message).toContain(part);
    const signature = await account.signMessage({ message: q.agreementChallenge.message });
    const res = await call(m, "POST", "/accept", {
      walletAddress: account.address,
      amount: "100.00",
      tenureDays: 7,
      agreementChallengeId: q.agreementChallenge.id,
      walletSignature: signature,
      channel: "IOS",
    });
    expect(res.status).toBe(201);
    expect(res.body.loan).toMatchObject({
      status: "ACTIVE",
      program: m.programId,
      channel: "IOS",
      principalAmount: "100.00",
      tenureDays: 7,
      borrowerWalletAddress: account.address,
    });
    const status = await call(m, "GET", `/loans/${res.body.loan.id}`);
    expect(status.body.loan).toMatchObject({ id: res.body.loan.id, status: "ACTIVE", channel: "IOS" });
    expect(status.body.loan.borrowerRef).toBeUndefined();
    const boot = await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address }, ORIGIN, await sessionOf(m, account));
    expect(boot.body).toMatchObject({ agreementAccepted: true, creditLine: { available: "900.00" } });
    // The same accept again, without an idempotencyKey of its own: the challenge is single-use (SPEC.md rule 2), 400.
    const replay = await call(m, "POST", "/accept", {
      walletAddress: account.address,
      amount: "100.00",
      tenureDays: 7,
      agreementChallengeId: q.agreementChallenge.id,
      walletSignature: signature,
      channel: "IOS",
    });
    expect(replay.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: the challenge was already used"], error: "Bad Request" });
    expect(await t.db.select().from(loans).where(eq(loans.programId, m.programId))).toHaveLength(1);
  });

  test("tampered amount, tenure, wallet; another wallet's signature; expired; used: 400 naming the field, no loan", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address);
    const signature = await account.signMessage({ message: q.agreementChallenge.message });
    const body = {
      walletAddress: account.address,
      amount: "100.00",
      tenureDays: 7,
      agreementChallengeId: q.agreementChallenge.id,
      walletSignature: signature,
      channel: "WEB",
    };
    const field = async (over: Record<string, unknown>) => {
      const res = await call(m, "POST", "/accept", { ...body, ...over });
      expect(res.status).toBe(400);
      return (res.body.message as string[]).map((s) => s.split(":")[0]);
    };
    expect(await field({ amount: "150.00" })).toEqual(["amount"]);
    expect(await field({ tenureDays: 15 })).toEqual(["tenureDays"]);
    expect(await field({ walletAddress: privateKeyToAccount(generatePrivateKey()).address })).toEqual(["walletAddress"]);
    expect(await field({ walletSignature: await privateKeyToAccount(generatePrivateKey()).signMessage({ message: q.agreementChallenge.message }) })).toEqual([
      "walletSignature",
    ]);
    expect(await field({ agreementChallengeId: crypto.randomUUID() })).toEqual(["agreementChallengeId"]);
    expect(await t.db.select().from(loans).where(eq(loans.programId, m.programId))).toEqual([]);

    // Used: the right accept succeeds once; another idempotency key cannot reuse the challenge.
    expect((await call(m, "POST", "/accept", body)).status).toBe(201);
    expect(await field({ idempotencyKey: "another" })).toEqual(["agreementChallengeId"]);

    // Expired: 301 s later on the tenant's clock.
    const q2 = await quote(m, account.address);
    const sig2 = await account.signMessage({ message: q2.agreementChallenge.message });
    const adv = await t.request("POST", "/v1/sandbox/clock/advance", { body: { seconds: 301 }, headers: { "x-api-key": m.key } });
    expect(adv.status).toBe(200);
    const expired = await call(m, "POST", "/accept", { ...body, agreementChallengeId: q2.agreementChallenge.id, walletSignature: sig2 });
    expect(expired.status).toBe(400);
    expect(expired.body.message).toEqual(["agreementChallengeId: the challenge has expired"]);
  });

  test("the merchant's fees change between quote and accept: 400 naming the change, no loan; a new quote states and makes the new price", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address);
    expect(q).toMatchObject({ processingFee: "2.00", totalDue: "102.00" });
    // The signed text states what the borrower will owe: total, late fee per day past the due date, when it defaults.
    const config = (await t.request("GET", `/v1/merchant-configs/${m.merchantConfigId}`, { headers: bearer(m.owner.token) })).body;
    const late = config.lateFee.type === "FIXED" ? config.lateFee.value : null;
    expect(q.agreementChallenge.message).toContain("Total due: 102.00 USDC");
    if (late) expect(q.agreementChallenge.message).toContain(`Late fee: ${late} USDC for each started day past the due date`);
    expect(q.agreementChallenge.message).toContain(`Default: ${config.gracePeriodDays} days past the due date, if still unpaid`);
    const signed = await signedAccept(m, account, q);
    const { id: _id, loanProductId: _p, createdAt: _c, updatedAt: _u, ...editable } = config;
    const put = (over: Record<string, unknown>) =>
      t.request("PUT", `/v1/merchant-configs/${m.merchantConfigId}`, { headers: bearer(m.owner.token), body: { ...editable, ...over } });
    expect((await put({ processingFee: { type: "PERCENTAGE", value: "10.00" }, lateFee: { type: "FIXED", value: "25.00" }, gracePeriodDays: 0 })).status).toBe(
      200,
    );

    const refused = await call(m, "POST", "/accept", signed);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toHaveLength(1);
    expect(refused.body.message[0]).toStartWith(
      "agreementChallengeId: the merchant's terms changed since the quote (total due 102.00 → 110.00, late fee per day",
    );
    expect(refused.body.message[0]).toContain("days before default");
    expect(await t.db.select().from(loans).where(eq(loans.programId, m.programId))).toEqual([]);

    // Quoted again: the new price is what the borrower signs, and what the loan carries.
    const again = await quote(m, account.address);
    expect(again).toMatchObject({ processingFee: "10.00", totalDue: "110.00" });
    expect(again.agreementChallenge.message).toContain("Late fee: 25.00 USDC for each started day past the due date");
    expect(again.agreementChallenge.message).toContain("Default: 0 days past the due date");
    const made = await call(m, "POST", "/accept", { ...(await signedAccept(m, account, again)), idempotencyKey: "draw-1" });
    expect(made.status).toBe(201);
    const loan = (await t.request("GET", `/v1/loans/${made.body.loan.id}`, { headers: { "x-api-key": m.key } })).body;
    expect(loan).toMatchObject({ processingFee: "10.00", totalDue: "110.00", gracePeriodDays: 0 });
    expect(loan.agreement.message).toBe(again.agreementChallenge.message);
    // The price changes again: a retry of that accept still answers with its loan (200), made on the terms it was signed on.
    expect((await put({ processingFee: { type: "PERCENTAGE", value: "5.00" } })).status).toBe(200);
    const retried = await call(m, "POST", "/accept", { ...(await signedAccept(m, account, again)), idempotencyKey: "draw-1" });
    expect(retried.status).toBe(200);
    expect(retried.body.loan).toMatchObject({ id: made.body.loan.id, processingFee: "10.00", totalDue: "110.00" });
  });

  test("an accept whose idempotency key already made a loan answers that loan (200) and leaves its new challenge unused", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const first = await call(m, "POST", "/accept", { ...(await signedAccept(m, account)), idempotencyKey: "order-77" });
    expect(first.status).toBe(201);
    // The client quoted again (say, for another amount) and retried with the same key.
    const q = await quote(m, account.address, "50.00", 7);
    const retried = await call(m, "POST", "/accept", { ...(await signedAccept(m, account, q)), idempotencyKey: "order-77" });
    expect(retried.status).toBe(200);
    expect(retried.body.loan).toMatchObject({ id: first.body.loan.id, principalAmount: "100.00" });
    // The new challenge was not used: with a new key it makes its own loan.
    const own = await call(m, "POST", "/accept", { ...(await signedAccept(m, account, q)), idempotencyKey: "order-78" });
    expect(own.status).toBe(201);
    expect(own.body.loan).toMatchObject({ principalAmount: "50.00" });
    expect(own.body.loan.id).not.toBe(first.body.loan.id);
  });

  test("a company name cannot add lines to the text a wallet signs: refused with newlines; one stored before is put on one line", async () => {
    const m = await merchant();
    const settings = (await t.request("GET", "/v1/settings", { headers: bearer(m.owner.token) })).body;
    const putName = (companyName: string) =>
      t.request("PUT", "/v1/settings", { headers: bearer(m.owner.token), body: { ...settings, branding: { ...settings.branding, companyName } } });
    for (const name of [
      "Evil\nAmount: 1.00 USDC",
      "Evil\rTotal due: 1.00",
      "Evil\u2028Amount: 1.00 USDC",
      "Evil\u2029x",
      "Evil\u200F",
      "Evil\u202E",
      "Evil\u0000",
    ]) {
      const res = await putName(name);
      expect(res.status).toBe(400);
      expect(res.body.message).toEqual([
        "branding.companyName: must not contain control, invisible or bidirectional formatting characters, or line separators",
      ]);
    }
    // A name stored before the rule (written here straight to the table).
    await t.db.update(tenantSettings).set({ companyName: "Evil\nAmount:\u20281.00 USDC" }).where(eq(tenantSettings.tenantId, m.owner.tenantId));
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address, "300.00", 7);
    const lines = q.agreementChallenge.message.split(/\r\n|[\n\r\u2028\u2029\u0085]/);
    expect(lines).toContain("Merchant: Evil Amount: 1.00 USDC");
    expect(lines.filter((l: string) => l.startsWith("Amount:"))).toEqual(["Amount: 300.00 USDC"]);
    const session = await call(m, "POST", "/wallet-session/challenge", { walletAddress: account.address });
    expect(session.status).toBe(200);
    expect(session.body.message.split("\n")[0]).toBe("Sign in to Evil Amount: 1.00 USDC credit with your wallet.");
  });

  test("a draw must fit what the credit line has available, at quote (with the wallet's session) and again at accept", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const session = await sessionOf(m, account);
    const draw = async (amount: string) => {
      const q = await quote(m, account.address, amount, 7);
      const walletSignature = await account.signMessage({ message: q.agreementChallenge.message });
      return {
        q,
        body: { walletAddress: account.address, amount, tenureDays: 7, agreementChallengeId: q.agreementChallenge.id, walletSignature, channel: "WEB" },
      };
    };
    expect((await call(m, "POST", "/accept", (await draw("600.00")).body)).status).toBe(201);
    const over = await call(m, "POST", "/quote", { walletAddress: account.address, amount: "500.00", tenureDays: 7 }, ORIGIN, session);
    expect(over.status).toBe(400);
    expect(over.body.message).toEqual(["amount: at most 400.00 is available on this credit line until its open loans are repaid"]);
    // Quoted while it fit; another draw then used the room: the accept is refused and makes no loan.
    const late = await draw("400.00");
    expect((await call(m, "POST", "/accept", (await draw("300.00")).body)).status).toBe(201);
    const refused = await call(m, "POST", "/accept", late.body);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual(["amount: at most 100.00 is available on this credit line until its open loans are repaid"]);
    // Its signature verified, so the refusal used the challenge up: the same accept again is "already used".
    const again = await call(m, "POST", "/accept", late.body);
    expect(again.body.message).toEqual(["agreementChallengeId: the challenge was already used"]);
    expect((await t.db.select().from(loans).where(eq(loans.programId, m.programId))).map((l) => l.principal).sort()).toEqual([300_000_000n, 600_000_000n]);
    const line = await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address }, ORIGIN, session);
    expect(line.body.creditLine).toMatchObject({ limit: "1000.00", available: "100.00" });
  });

  test("concurrent draws of one wallet cannot overdraw its line: the loan insert enforces the limit", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const bodies = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const q = await quote(m, account.address, "300.00", 7);
        const walletSignature = await account.signMessage({ message: q.agreementChallenge.message });
        return {
          walletAddress: account.address,
          amount: "300.00",
          tenureDays: 7,
          agreementChallengeId: q.agreementChallenge.id,
          walletSignature,
          channel: "WEB",
        };
      }),
    );
    // All five were quoted while the line was empty; they race.
    const results = await Promise.all(bodies.map((body) => call(m, "POST", "/accept", body)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expect(r.body.message[0]).toStartWith("amount: ");
    const made = await t.db.select().from(loans).where(eq(loans.programId, m.programId));
    expect(made.map((l) => l.principal)).toEqual([300_000_000n, 300_000_000n, 300_000_000n]);
    // One event per loan made, none for the refused ones.
    const submitted = await t.db.select().from(events).where(eq(events.tenantId, m.owner.tenantId));
    expect(submitted.filter((ev) => ev.type === "loan.application_submitted")).toHaveLength(3);
  });

  test("10 concurrent accepts of one challenge make one loan", async () => {
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const q = await quote(m, account.address);
    const signature = await account.signMessage({ message: q.agreementChallenge.message });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(m, "POST", "/accept", {
          walletAddress: account.address,
          amount: "100.00",
          tenureDays: 7,
          agreementChallengeId: q.agreementChallenge.id,
          walletSignature: signature,
          channel: "WEB",
          idempotencyKey: `k${i}`,
        }),
      ),
    );
    expect(results.every((r) => r.status < 500)).toBe(true);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(await t.db.select().from(loans).where(eq(loans.programId, m.programId))).toHaveLength(1);
  });

  test("the same accept sent 8 times at once (a client retrying before the first answered): one 201, the others 200 with that loan", async () => {
    const m = await merchant();
    const body = { ...(await signedAccept(m, privateKeyToAccount(generatePrivateKey()))), idempotencyKey: "order-1" };
    const results = await Promise.all(Array.from({ length: 8 }, () => call(m, "POST", "/accept", body)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const made = await t.db.select().from(loans).where(eq(loans.programId, m.programId));
    expect(made).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.loan.id))).toEqual(new Set([made[0]!.id]));
    // Another key with the used challenge is not a retry of that accept: 400 at once.
    const other = await call(m, "POST", "/accept", { ...body, idempotencyKey: "order-2" });
    expect(other.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: the challenge was already used"], error: "Bad Request" });
  });

  test("KYC required: 409 until the merchant confirms; the verified challenge is used up by the refused accept; a new quote then funds", async () => {
    const m = await merchant();
    await requireKycBeforeFunding(m);
    const account = privateKeyToAccount(generatePrivateKey());
    const signedDraw = () => signedAccept(m, account);
    const body = await signedDraw();
    const blocked = await call(m, "POST", "/accept", body);
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toBe("Conflict");
    const line = (await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address })).body.creditLine;
    await t.request("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, { body: { verified: true }, headers: { "x-api-key": m.key } });
    // DECISIONS "Embed and widget": consumed by the first accept that verifies, whatever happens next.
    const reused = await call(m, "POST", "/accept", body);
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual({ statusCode: 400, message: ["agreementChallengeId: the challenge was already used"], error: "Bad Request" });
    expect(await t.db.select().from(loans).where(eq(loans.programId, m.programId))).toEqual([]);
    const ok = await call(m, "POST", "/accept", await signedDraw());
    expect(ok.status).toBe(201);
    expect(ok.body.loan.status).toBe("ACTIVE");
  });

  test("the merchant failing the borrower's KYC (PATCH /v1/borrowers/:ref/kyc) withdraws the line's confirmation: bootstrap asks for KYC again, the next draw is 409 and nothing is funded; a new confirmation draws again (an audit drew a funded loan for a FAILED borrower)", async () => {
    const m = await merchant();
    await requireKycBeforeFunding(m);
    const account = privateKeyToAccount(generatePrivateKey());
    const bootstrap = async () => (await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address })).body;
    const line = (await bootstrap()).creditLine;
    const confirm = () =>
      t.request("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, {
        body: { verified: true, merchantUserId: "ops-1", borrowerRef: "customer-7" },
        headers: { "x-api-key": m.key },
      });
    expect((await confirm()).status).toBe(200);
    const first = await call(m, "POST", "/accept", await signedAccept(m, account, await quote(m, account.address, "50.00")));
    expect(first.status).toBe(201);
    expect(first.body.loan.status).toBe("ACTIVE");

    const failed = await t.request("PATCH", "/v1/borrowers/customer-7/kyc", {
      body: { status: "FAILED", merchantUserId: "ops-1" },
      headers: { "x-api-key": m.key },
    });
    expect(failed.status).toBe(200);
    expect(failed.body.kyc.status).toBe("FAILED");
    expect(await bootstrap()).toMatchObject({ requiresKyc: true, agreementAccepted: true });
    const refused = await call(m, "POST", "/accept", await signedAccept(m, account, await quote(m, account.address, "50.00")));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ statusCode: 409, error: "Conflict" });
    expect((await t.db.select().from(loans).where(eq(loans.programId, m.programId))).map((l) => l.status)).toEqual(["ACTIVE"]);

    // PENDING (a re-verification) withdraws it too; VERIFIED by itself does not confirm a line again: the merchant does.
    expect((await confirm()).status).toBe(200);
    expect((await bootstrap()).requiresKyc).toBe(false);
    await t.request("PATCH", "/v1/borrowers/customer-7/kyc", { body: { status: "PENDING", merchantUserId: "ops-1" }, headers: { "x-api-key": m.key } });
    expect((await bootstrap()).requiresKyc).toBe(true);
    await t.request("PATCH", "/v1/borrowers/customer-7/kyc", { body: { status: "VERIFIED", merchantUserId: "ops-1" }, headers: { "x-api-key": m.key } });
    expect((await bootstrap()).requiresKyc).toBe(true);
    expect((await confirm()).status).toBe(200);
    const again = await call(m, "POST", "/accept", await signedAccept(m, account, await quote(m, account.address, "50.00")));
    expect(again.status).toBe(201);
    expect(again.body.loan.status).toBe("ACTIVE");
  });

  test("a line's first draw racing the merchant's confirmation that names its borrowerRef: the loan and the line end under one borrower, never split", async () => {
    // The draw committed its loan under the line's first ref, and had not yet marked the agreement accepted: the
    // confirmation's new ref is refused (409), so the line keeps the ref its loan is under.
    const m = await merchant();
    const account = privateKeyToAccount(generatePrivateKey());
    const drawn = await call(m, "POST", "/accept", await signedAccept(m, account));
    expect(drawn.status).toBe(201);
    const [line] = await t.db.select().from(creditLines).where(eq(creditLines.programId, m.programId));
    await t.db.update(creditLines).set({ agreementAcceptedAt: null }).where(eq(creditLines.id, line!.id));
    const confirm = await t.request("POST", `/v1/credit-lines/${line!.id}/kyc-confirmation`, {
      body: { verified: true, merchantUserId: "ops-1", borrowerRef: "customer-race" },
      headers: { "x-api-key": m.key },
    });
    expect(confirm.status).toBe(409);
    const [after] = await t.db.select().from(creditLines).where(eq(creditLines.id, line!.id));
    const [loan] = await t.db.select().from(loans).where(eq(loans.id, drawn.body.loan.id));
    const [borrower] = await t.db.select().from(borrowers).where(eq(borrowers.id, loan!.borrowerId));
    expect(after!.borrowerRef).toBe(borrower!.borrowerRef);

    // The other order: the confirmation moved the line after the draw read it; the draw's insert is refused (409).
    const other = await merchant();
    const wallet = newWallet();
    const [program] = await t.db.select().from(widgetPrograms).where(eq(widgetPrograms.id, other.programId));
    await t.db.insert(creditLines).values({
      id: crypto.randomUUID(),
      tenantId: program!.tenantId,
      programId: other.programId,
      walletAddress: wallet,
      chain: "POLYGON_AMOY",
      borrowerRef: "customer-moved",
      createdAt: t.clock.now(),
      updatedAt: t.clock.now(),
    });
    const { loanProductId } = (await t.request("GET", `/v1/merchant-configs/${other.merchantConfigId}`, { headers: bearer(other.owner.token) })).body;
    const stale = loanCreation(
      t,
      { tenantId: program!.tenantId, loanProductId },
      {
        borrowerWalletAddress: wallet,
        borrowerRef: `wallet:${wallet}`,
        program: { id: other.programId, channel: "WEB", creditLimit: 1_000_000_000n },
      },
    );
    await expect(createLoanVerb({ db: t.db }, stale)).rejects.toThrow("The credit line's borrower changed while this draw was made");
    expect(await t.db.select().from(loans).where(eq(loans.programId, other.programId))).toEqual([]);
    const current = await createLoanVerb({ db: t.db }, { ...stale, borrowerRef: "customer-moved", idempotencyKey: "current-ref" });
    expect(current.created).toBe(true);
  });

  test("a widget loan drawn while the pool was empty, its borrower then failed by the merchant: when liquidity comes its funding is held (HELD, loan.funding_failed naming KYC_NOT_VERIFIED), nothing sent", async () => {
    const m = await merchant();
    await requireKycBeforeFunding(m);
    const account = privateKeyToAccount(generatePrivateKey());
    const line = (await call(m, "POST", "/credit-line/bootstrap", { walletAddress: account.address })).body.creditLine;
    await t.request("POST", `/v1/credit-lines/${line.id}/kyc-confirmation`, {
      body: { verified: true, borrowerRef: "customer-9" },
      headers: { "x-api-key": m.key },
    });
    expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "0.00" }, headers: { "x-api-key": m.key } })).status).toBe(200);
    const drawn = await call(m, "POST", "/accept", await signedAccept(m, account));
    expect(drawn.status).toBe(201);
    expect(drawn.body.loan).toMatchObject({ status: "CREATED", fundingState: "AWAITING_LIQUIDITY" });
    await t.request("PATCH", "/v1/borrowers/customer-9/kyc", { body: { status: "FAILED", merchantUserId: "ops-1" }, headers: { "x-api-key": m.key } });
    expect((await t.request("PUT", "/v1/sandbox/liquidity", { body: { available: "500.00" }, headers: { "x-api-key": m.key } })).status).toBe(200);
    const [loan] = await t.db.select().from(loans).where(eq(loans.programId, m.programId));
    expect(loan).toMatchObject({ status: "CREATED", fundingState: "HELD", fundedAt: null });
    const failedEvents = (await t.db.select().from(events).where(eq(events.loanId, loan!.id))).filter((ev) => ev.type === "loan.funding_failed");
    // The first when the pool was empty; the second when the hold began.
    expect(failedEvents.map((ev) => (ev.envelope as { data: { reasons?: { code: string }[] } }).data.reasons?.map((r) => r.code) ?? null)).toEqual([
      null,
      ["KYC_NOT_VERIFIED"],
    ]);
  });
});

describe("bodies that are not UTF-8", () => {
  test("400 as malformed JSON on a route that reads one; an unknown embed key is still 404 and a wrong method 405", async () => {
    const m = await merchant();
    const raw = new Uint8Array([...new TextEncoder().encode('{"walletAddress":"'), 0xff, ...new TextEncoder().encode('"}')]);
    const headers = { "content-type": "application/json", origin: ORIGIN };
    const bad = await e.request("POST", `/v1/embed/${m.embedKey}/eligibility`, { rawBody: raw, headers });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ statusCode: 400, message: "Malformed JSON in request body", error: "Bad Request" });
    expect((await e.request("POST", "/v1/embed/ek_test_nosuchkey000000000000000000/eligibility", { rawBody: raw, headers })).status).toBe(404);
    expect((await e.request("POST", `/v1/embed/${m.embedKey}/config`, { rawBody: raw, headers })).status).toBe(405);
  });
});

describe("TON Connect signatures", () => {
  test("a TON program: signData text signature by a v4 wallet key made in the test draws a loan on TON_TESTNET", async () => {
    const m = await merchant();
    const config = await t.request("POST", "/v1/merchant-configs", {
      body: {
        network: "TON",
        stablecoin: "USDT",
        tenures: [3, 7],
        minTicket: "10.00",
        maxTicket: "500.00",
        gracePeriodDays: 3,
        processingFee: { type: "FIXED", value: "1.00" },
        lateFee: { type: "FIXED", value: "0.50" },
      },
      headers: bearer(m.owner.token),
    });
    const program = await t.request("POST", "/v1/widget-programs", {
      body: { name: "TON", merchantConfigId: config.body.id, allowedOrigins: [ORIGIN] },
      headers: bearer(m.owner.token),
    });
    const ton = { ...m, embedKey: program.body.embedKey as string, programId: program.body.id as string };
    const keys = keyPairFromSeed(Buffer.from(crypto.getRandomValues(new Uint8Array(32))));
    const address = WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey }).address.toString({ testOnly: true });
    const q = await quote(ton, address, "50.00", 3);
    expect(q.totalDue).toBe("51.00");
    const timestamp = Math.floor(Date.now() / 1000);
    const domain = "embed.svc-credit.test";
    const hash = await tonConnectSignDataTextHash({ address, domain, timestamp, text: q.agreementChallenge.message });
    const signature = sign(Buffer.from(hash), keys.secretKey).toString("base64");
    const body = {
      walletAddress: address,
      amount: "50.00",
      tenureDays: 3,
      agreementChallengeId: q.agreementChallenge.id,
      walletSignature: signature,
      publicKey: keys.publicKey.toString("hex"),
      timestamp,
      domain,
      channel: "ANDROID",
    };
    const wrongDomain = await call(ton, "POST", "/accept", { ...body, domain: "evil.example" });
    expect(wrongDomain.status).toBe(400);
    expect(wrongDomain.body.message).toEqual([
      "domain: is not an allowed TON Connect domain (the widget host, or the host of a widget program's allowed origin)",
    ]);
    const otherKey = keyPairFromSeed(Buffer.from(crypto.getRandomValues(new Uint8Array(32))));
    const notTheOwner = await call(ton, "POST", "/accept", {
      ...body,
      publicKey: otherKey.publicKey.toString("hex"),
      walletSignature: sign(Buffer.from(hash), otherKey.secretKey).toString("base64"),
    });
    expect(notTheOwner.status).toBe(400);
    const res = await call(ton, "POST", "/accept", body);
    expect(res.status).toBe(201);
    expect(res.body.loan).toMatchObject({ chain: "TON_TESTNET", stablecoin: "USDT", status: "ACTIVE", channel: "ANDROID", program: ton.programId });

    // The host the widget was reached on (what its TON Connect manifest names) is a valid domain too, besides EMBED_HOST.
    const q2 = await quote(ton, address, "20.00", 3);
    const hash2 = await tonConnectSignDataTextHash({ address, domain: "localhost", timestamp, text: q2.agreementChallenge.message });
    const res2 = await call(ton, "POST", "/accept", {
      ...body,
      amount: "20.00",
      agreementChallengeId: q2.agreementChallenge.id,
      domain: "localhost",
      walletSignature: sign(Buffer.from(hash2), keys.secretKey).toString("base64"),
    });
    expect(res2.status).toBe(201);
  });
});
