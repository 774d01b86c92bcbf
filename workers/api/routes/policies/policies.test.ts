import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { policies } from "../../../../db/schema/policies.ts";
import { UNDERWRITING_RULES } from "../../../../shared/domain/underwriting.ts";
import { addUserWithRole, bearer } from "../../../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../../../shared/testing/harness.ts";
import { apiKey, createdLoan, newWallet, sandboxTenant } from "../../../../shared/testing/loan-fixtures.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const policy = (over: Record<string, unknown> = {}) => ({
  requireKycVerified: false,
  manualReviewAbove: null,
  maxOpenLoansPerBorrower: null,
  blockedWallets: [] as string[],
  ...over,
});

const put = (key: string, body: unknown) => t.request("PUT", "/v1/policies", { body, headers: apiKey(key) });

const expectFieldErrors = (res: { status: number; body: any }, ...fields: string[]) => {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" });
  expect(Array.isArray(res.body.message)).toBe(true);
  for (const field of fields) expect(res.body.message.some((m: string) => m.startsWith(`${field}: `))).toBe(true);
};

const TON_RAW = `0:${"ab".repeat(32)}`;
const SOLANA = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";

describe("policies: happy path", () => {
  test("after signup: version 1, the default policy, and the rules in evaluation order", async () => {
    const m = await sandboxTenant(t);
    const res = await t.request("GET", "/v1/policies", { headers: apiKey(m.key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      version: 1,
      requireKycVerified: false,
      manualReviewAbove: null,
      maxOpenLoansPerBorrower: null,
      blockedWallets: [],
      createdAt: expect.any(String),
      rules: UNDERWRITING_RULES.map((r) => ({ code: r.code, order: r.order, effect: r.effect, description: r.description })),
    });
    expect(res.body.rules.map((r: { code: string }) => r.code)).toEqual([
      "KYC_NOT_VERIFIED",
      "WALLET_BLOCKED",
      "MAX_OPEN_LOANS",
      "MANUAL_REVIEW_AMOUNT",
      "LIVE_KYC_POLICY_REQUIRED",
    ]);
    // Dashboard sessions read it too.
    expect((await t.request("GET", "/v1/policies", { headers: bearer(m.token) })).body).toEqual(res.body);
  });

  test("each PUT is a new version; GET reads the latest; older versions stay stored", async () => {
    const m = await sandboxTenant(t);
    const first = await put(m.key, policy({ requireKycVerified: true, manualReviewAbove: "250.5", maxOpenLoansPerBorrower: 2 }));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 2, requireKycVerified: true, manualReviewAbove: "250.50", maxOpenLoansPerBorrower: 2, blockedWallets: [] });
    expect(first.body.createdAt).toBe(t.clock.now().toISOString());
    const second = await t.request("PUT", "/v1/policies", { body: policy(), headers: bearer(m.token) });
    expect(second.status).toBe(200);
    expect(second.body.version).toBe(3);
    expect((await t.request("GET", "/v1/policies", { headers: apiKey(m.key) })).body).toEqual(second.body);

    const rows = await t.db.select().from(policies).where(eq(policies.tenantId, m.tenantId)).orderBy(policies.version);
    expect(rows.map((r) => [r.version, r.requireKycVerified, r.createdBy])).toEqual([
      [1, false, "system:signup"],
      [2, true, `apiKey:${m.keyId}`],
      [3, false, `user:${m.userId}`],
    ]);
  });

  test("GET /v1/policies/versions: every version newest first with who saved it, paginated; another tenant's are not listed", async () => {
    const m = await sandboxTenant(t);
    const other = await sandboxTenant(t);
    // Saved in the same millisecond: the order is the version's, never the clock's.
    expect((await put(m.key, policy({ requireKycVerified: true }))).status).toBe(200);
    expect((await t.request("PUT", "/v1/policies", { body: policy({ maxOpenLoansPerBorrower: 4 }), headers: bearer(m.token) })).status).toBe(200);
    expect((await put(other.key, policy())).status).toBe(200);

    const all = await t.request("GET", "/v1/policies/versions", { headers: bearer(m.token) });
    expect(all.status).toBe(200);
    expect(all.body.data.map((v: { version: number; createdBy: string }) => [v.version, v.createdBy])).toEqual([
      [3, `user:${m.userId}`],
      [2, `apiKey:${m.keyId}`],
      [1, "system:signup"],
    ]);
    expect(all.body.data[1]).toMatchObject({ requireKycVerified: true, maxOpenLoansPerBorrower: null, rules: expect.any(Array) });
    expect(all.body.data[0]).toMatchObject({ requireKycVerified: false, maxOpenLoansPerBorrower: 4 });
    expect(all.body.nextCursor).toBeNull();

    const first = await t.request("GET", "/v1/policies/versions?limit=2", { headers: apiKey(m.key) });
    expect(first.body.data.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    const rest = await t.request("GET", `/v1/policies/versions?limit=2&cursor=${first.body.nextCursor}`, { headers: apiKey(m.key) });
    expect(rest.body).toMatchObject({ data: [expect.objectContaining({ version: 1 })], nextCursor: null });
    expect((await t.request("GET", "/v1/policies/versions?limit=0", { headers: apiKey(m.key) })).status).toBe(400);
    expect((await t.request("GET", "/v1/policies/versions")).status).toBe(401);
  });

  test("blocked wallets are stored canonical, per address family, and deduplicated", async () => {
    const m = await sandboxTenant(t);
    const evm = newWallet();
    const res = await put(
      m.key,
      policy({ blockedWallets: [evm.toLowerCase(), evm, ` ${evm.toUpperCase().replace("0X", "0x")} `, TON_RAW.toUpperCase(), TON_RAW, SOLANA] }),
    );
    expect(res.status).toBe(200);
    expect(res.body.blockedWallets).toEqual([evm, TON_RAW, SOLANA]);
  });

  test("a TON friendly address is stored as its raw form", async () => {
    const m = await sandboxTenant(t);
    const { Address } = await import("@ton/core");
    const raw = Address.parseRaw(TON_RAW);
    const res = await put(m.key, policy({ blockedWallets: [raw.toString({ bounceable: true }), raw.toString({ bounceable: false })] }));
    expect(res.status).toBe(200);
    expect(res.body.blockedWallets).toEqual([TON_RAW]);
  });

  test("manualReviewAbove 0 is allowed and null clears it", async () => {
    const m = await sandboxTenant(t);
    expect((await put(m.key, policy({ manualReviewAbove: "0" }))).body.manualReviewAbove).toBe("0.00");
    expect((await put(m.key, policy({ manualReviewAbove: null }))).body.manualReviewAbove).toBeNull();
  });
});

describe("policies: decisions follow the version in force", () => {
  test("a loan created after a PUT names that version", async () => {
    const m = await sandboxTenant(t);
    const before = await createdLoan(t, m.key);
    expect(before.decision).toMatchObject({ outcome: "APPROVED", policyVersion: 1 });
    const saved = await put(m.key, policy({ manualReviewAbove: "900.00" }));
    const after = await createdLoan(t, m.key);
    expect(after.decision).toMatchObject({ outcome: "APPROVED", reasons: [], policyVersion: saved.body.version });
    expect(saved.body.version).toBe(2);
    // The earlier decision is not revisited.
    expect((await t.request("GET", `/v1/loans/${before.id}`, { headers: apiKey(m.key) })).body.decision.policyVersion).toBe(1);
  });

  test("requireKycVerified declines an unverified borrower (KYC_NOT_VERIFIED) and approves once PATCHed VERIFIED", async () => {
    const m = await sandboxTenant(t);
    const { body: saved } = await put(m.key, policy({ requireKycVerified: true }));
    const declined = await createdLoan(t, m.key, { borrowerRef: "kyc-1" });
    expect(declined).toMatchObject({ status: "CREATED", derivedStatus: "DECLINED", fundingState: "NONE" });
    expect(declined.decision).toMatchObject({ outcome: "DECLINED", policyVersion: saved.version });
    expect(declined.decision.reasons).toEqual([{ code: "KYC_NOT_VERIFIED", message: expect.stringContaining("PENDING") }]);

    const failed = await t.request("PATCH", "/v1/borrowers/kyc-1/kyc", { body: { status: "FAILED", merchantUserId: "ops" }, headers: apiKey(m.key) });
    expect(failed.status).toBe(200);
    expect((await createdLoan(t, m.key, { borrowerRef: "kyc-1" })).decision.outcome).toBe("DECLINED");

    const verified = await t.request("PATCH", "/v1/borrowers/kyc-1/kyc", { body: { status: "VERIFIED", merchantUserId: "ops" }, headers: apiKey(m.key) });
    expect(verified.status).toBe(200);
    const approved = await createdLoan(t, m.key, { borrowerRef: "kyc-1" });
    expect(approved).toMatchObject({ status: "ACTIVE", decision: { outcome: "APPROVED", reasons: [], policyVersion: saved.version } });
  });

  test("a blocked wallet is declined (WALLET_BLOCKED) however it is typed", async () => {
    const m = await sandboxTenant(t);
    const wallet = newWallet();
    await put(m.key, policy({ blockedWallets: [wallet.toLowerCase()] }));
    const declined = await createdLoan(t, m.key, { borrowerWalletAddress: wallet });
    expect(declined.decision.outcome).toBe("DECLINED");
    expect(declined.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["WALLET_BLOCKED"]);
    expect((await createdLoan(t, m.key)).decision.outcome).toBe("APPROVED");
  });

  test("manualReviewAbove 50.00: 50.00 is approved, 50.01 waits for review (MANUAL_REVIEW_AMOUNT)", async () => {
    const m = await sandboxTenant(t);
    await put(m.key, policy({ manualReviewAbove: "50.00" }));
    expect((await createdLoan(t, m.key, { principalAmount: "50.00" })).decision.outcome).toBe("APPROVED");
    const review = await createdLoan(t, m.key, { principalAmount: "50.01" });
    expect(review).toMatchObject({ status: "CREATED", fundingState: "NONE", fundedAt: null });
    expect(review.decision.outcome).toBe("MANUAL_REVIEW");
    expect(review.decision.reasons).toEqual([{ code: "MANUAL_REVIEW_AMOUNT", message: expect.stringContaining("50.01") }]);
  });

  test("maxOpenLoansPerBorrower 1 declines a second open loan of the same borrower, not another borrower's", async () => {
    const m = await sandboxTenant(t);
    await put(m.key, policy({ maxOpenLoansPerBorrower: 1 }));
    expect((await createdLoan(t, m.key, { borrowerRef: "one-loan" })).status).toBe("ACTIVE");
    const second = await createdLoan(t, m.key, { borrowerRef: "one-loan" });
    expect(second.decision.outcome).toBe("DECLINED");
    expect(second.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["MAX_OPEN_LOANS"]);
    expect((await createdLoan(t, m.key, { borrowerRef: "another" })).decision.outcome).toBe("APPROVED");
  });

  test("every rule that fires adds its reason; a decline wins over review", async () => {
    const m = await sandboxTenant(t);
    const wallet = newWallet();
    await put(m.key, policy({ requireKycVerified: true, manualReviewAbove: "10.00", blockedWallets: [wallet] }));
    const loan = await createdLoan(t, m.key, { borrowerWalletAddress: wallet, principalAmount: "20.00" });
    expect(loan.decision.outcome).toBe("DECLINED");
    expect(loan.decision.reasons.map((r: { code: string }) => r.code)).toEqual(["KYC_NOT_VERIFIED", "WALLET_BLOCKED", "MANUAL_REVIEW_AMOUNT"]);
  });
});

describe("policies: errors", () => {
  let key: string;
  beforeAll(async () => {
    key = (await sandboxTenant(t)).key;
  });

  test("every missing field is named (PUT is a full replacement)", async () => {
    const res = await put(key, {});
    expectFieldErrors(res, "requireKycVerified", "manualReviewAbove", "maxOpenLoansPerBorrower", "blockedWallets");
    expect(res.body.message).toHaveLength(4);
    // Each says it is missing, rather than zod's "expected string, received undefined".
    expect(res.body.message).toEqual([
      "requireKycVerified: is required (expected boolean)",
      "manualReviewAbove: is required (expected string)",
      "maxOpenLoansPerBorrower: is required (expected number)",
      "blockedWallets: is required (expected array)",
    ]);
  });

  test.each([
    ["requireKycVerified as a string", { requireKycVerified: "true" }, "requireKycVerified"],
    ["requireKycVerified null", { requireKycVerified: null }, "requireKycVerified"],
    ["manualReviewAbove as a number", { manualReviewAbove: 50 }, "manualReviewAbove"],
    ["manualReviewAbove with 3 decimals", { manualReviewAbove: "50.001" }, "manualReviewAbove"],
    ["manualReviewAbove negative", { manualReviewAbove: "-1.00" }, "manualReviewAbove"],
    ["manualReviewAbove with an exponent", { manualReviewAbove: "1e3" }, "manualReviewAbove"],
    ["manualReviewAbove huge", { manualReviewAbove: "1234567890123456789" }, "manualReviewAbove"],
    ["manualReviewAbove above the bound", { manualReviewAbove: "1000000000.01" }, "manualReviewAbove"],
    ["maxOpenLoansPerBorrower 0", { maxOpenLoansPerBorrower: 0 }, "maxOpenLoansPerBorrower"],
    ["maxOpenLoansPerBorrower 1.5", { maxOpenLoansPerBorrower: 1.5 }, "maxOpenLoansPerBorrower"],
    ["maxOpenLoansPerBorrower as a string", { maxOpenLoansPerBorrower: "2" }, "maxOpenLoansPerBorrower"],
    ["blockedWallets not a list", { blockedWallets: "0xabc" }, "blockedWallets"],
    ["a blocked wallet that is no address", { blockedWallets: ["not-a-wallet"] }, "blockedWallets.0"],
    [
      "a blocked EVM wallet with a bad checksum",
      { blockedWallets: [SOLANA, "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045".replace("0xd8dA", "0xD8dA")] },
      "blockedWallets.1",
    ],
    ["a blocked wallet that is a number", { blockedWallets: [42] }, "blockedWallets.0"],
    ["a blocked wallet of 5000 characters", { blockedWallets: ["x".repeat(5000)] }, "blockedWallets.0"],
  ])("%s", async (_name, over, field) => {
    const res = await put(key, policy(over));
    expectFieldErrors(res, field);
    expect(res.body.message).toHaveLength(1);
  });

  test("1000 blocked wallets are accepted, 1001 are not", async () => {
    const wallets = Array.from({ length: 1001 }, () => newWallet());
    const ok = await put(key, policy({ blockedWallets: wallets.slice(0, 1000) }));
    expect(ok.status).toBe(200);
    expect(ok.body.blockedWallets).toHaveLength(1000);
    expectFieldErrors(await put(key, policy({ blockedWallets: wallets })), "blockedWallets");
  });

  test("a failed PUT stores no version", async () => {
    const m = await sandboxTenant(t);
    await put(m.key, policy({ maxOpenLoansPerBorrower: -1 }));
    expect((await t.request("GET", "/v1/policies", { headers: apiKey(m.key) })).body.version).toBe(1);
  });

  test("malformed JSON", async () => {
    const res = await t.request("PUT", "/v1/policies", { headers: { ...apiKey(key), "content-type": "application/json" }, rawBody: '{"requireKycVerified":' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Malformed JSON in request body");
  });
});

describe("policies: security", () => {
  test.each(["GET", "PUT"])("%s without credentials: 401", async (method) => {
    const res = await t.request(method, "/v1/policies", { body: method === "PUT" ? policy() : undefined });
    expect(res.status).toBe(401);
  });

  test("a MEMBER may read but not write; an ADMIN may write", async () => {
    const m = await sandboxTenant(t);
    const member = await addUserWithRole(t, m.token, "MEMBER");
    const admin = await addUserWithRole(t, m.token, "ADMIN");
    expect((await t.request("GET", "/v1/policies", { headers: bearer(member.token) })).status).toBe(200);
    const denied = await t.request("PUT", "/v1/policies", { body: policy({ requireKycVerified: true }), headers: bearer(member.token) });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("Forbidden");
    expect((await t.request("GET", "/v1/policies", { headers: apiKey(m.key) })).body.version).toBe(1);
    const allowed = await t.request("PUT", "/v1/policies", { body: policy({ requireKycVerified: true }), headers: bearer(admin.token) });
    expect(allowed.status).toBe(200);
  });

  test("policies are per tenant", async () => {
    const a = await sandboxTenant(t);
    const b = await sandboxTenant(t);
    await put(a.key, policy({ requireKycVerified: true }));
    expect((await t.request("GET", "/v1/policies", { headers: apiKey(b.key) })).body).toMatchObject({ version: 1, requireKycVerified: false });
    // b's loans are decided with b's policy.
    expect((await createdLoan(t, b.key)).decision).toMatchObject({ outcome: "APPROVED", policyVersion: 1 });
    const rows = await t.db
      .select()
      .from(policies)
      .where(and(eq(policies.tenantId, b.tenantId)));
    expect(rows).toHaveLength(1);
  });

  test("the OpenAPI document prints the rule order and the roles", async () => {
    const doc = (await t.request("GET", "/v1/openapi.json")).body;
    const get = doc.paths["/v1/policies"].get;
    const putOp = doc.paths["/v1/policies"].put;
    for (const rule of UNDERWRITING_RULES) expect(get.description).toContain(`${rule.order}. \`${rule.code}\``);
    expect(putOp.description).toContain("roles OWNER/ADMIN (API keys allowed)");
    expect(putOp.security).toEqual([{ ApiKey: [] }, { DashboardSession: [] }]);
    expect(putOp.responses["403"]).toBeDefined();
  });
});

describe("policies: robustness", () => {
  test("no request in this file answered 500", () => {
    expect(t.logs.filter((line) => line.includes("unhandled error"))).toEqual([]);
  });
});
