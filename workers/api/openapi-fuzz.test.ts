import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEV_OPERATOR_KEY, OPERATOR_KEY_HEADER } from "../../shared/auth/operator-key.ts";
import fc from "fast-check";
import { addUserWithRole, PASSWORD, uniqueEmail } from "../../shared/testing/fixtures.ts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { newWallet } from "../../shared/testing/loan-fixtures.ts";
import { fuzzDocument, type FuzzReport } from "../../shared/testing/openapi-fuzz.ts";
import type { OpenApiDoc } from "../../shared/testing/openapi-values.ts";
import { PARAM_RESOURCES, paramKey, seededTenant, type SeededTenant } from "../../shared/testing/seeded-tenant.ts";

let t: TestApp;
let m: SeededTenant;
let doc: OpenApiDoc;
/** A user of its own for the log-out route, which ends every session of its caller: the seeded owner's lives on. */
let leaving: string;
beforeAll(async () => {
  t = await createTestApp();
  m = await seededTenant(t, "Fuzzed");
  leaving = (await addUserWithRole(t, m.token, "OWNER")).token;
  doc = (await t.request("GET", "/v1/openapi.json")).body;
});
afterAll(() => t.close());

let n = 0;
const fresh = <T>(make: () => T) => fc.constant(null).map(() => make());

describe("the api document, fuzzed with real ids and generated bodies", () => {
  let report: FuzzReport;
  test("no 5xx; every 4xx with the spec's error body; invalid bodies get 400 naming the field", async () => {
    report = await fuzzDocument({
      doc,
      request: (method, path, init) => t.request(method, path, init),
      seed: 20_260_110,
      validRuns: 6,
      pathValues: (op, name) => PARAM_RESOURCES[paramKey(op.path, name)]?.(m) ?? null,
      credentials: (op, rng) => {
        const schemes = (op.op.security ?? []).flatMap((s) => Object.keys(s));
        const key = { "x-api-key": m.key };
        const session = { authorization: `Bearer ${op.path === "/v1/auth/logout" ? leaving : m.token}` };
        if (schemes.includes("OperatorKey")) return { [OPERATOR_KEY_HEADER]: DEV_OPERATOR_KEY } as Record<string, string>;
        if (schemes.includes("ApiKey") && schemes.includes("DashboardSession")) return rng() < 0.5 ? key : session;
        if (schemes.includes("ApiKey")) return key;
        if (schemes.includes("DashboardSession")) return session;
        return {};
      },
      hints: (op) => ({
        loanId: fc.constant(m.loanId),
        loanProductId: fc.constant(m.loanProductId),
        merchantConfigId: fc.constant(m.merchantConfigId),
        borrowerWalletAddress: fresh(newWallet),
        walletAddress: fresh(newWallet),
        address: fc.constant(m.loan.borrowerWalletAddress),
        from: fc.constant(m.loan.borrowerWalletAddress),
        to: fresh(newWallet),
        idempotencyKey: fresh(() => `fuzz-${++n}`),
        borrowerRef: fc.constant(m.borrowerRef),
        url: fc.constant("https://hooks.merchant.example/fuzz"),
        // Login with the seeded owner; everything else that takes an e-mail makes a new account.
        email: op.path === "/v1/auth/login" ? fc.constant(m.email) : fresh(() => uniqueEmail("fuzz")),
        password: fc.constant(PASSWORD),
      }),
    });
    expect(report.unfillable, "path parameters the fuzzer cannot fill with a real id: seed them in shared/testing/seeded-tenant.ts").toEqual([]);
    expect(report.failures).toEqual([]);
  });

  test("the valid calls get past validation: most answer 2xx", () => {
    const ok = Object.entries(report.valid.byStatus).reduce((sum, [status, count]) => sum + (Number(status) < 300 ? count : 0), 0);
    if (process.env.FUZZ_VERBOSE) console.log(report.valid.rejected.join("\n"));
    console.log(
      `api fuzz: ${report.operations} operations, ${report.valid.calls} valid calls ${JSON.stringify(report.valid.byStatus)}, ${report.invalid.calls} invalid calls`,
    );
    expect(report.operations).toBe(Object.values(doc.paths).reduce((sum, ops) => sum + Object.keys(ops).length, 0));
    expect(ok / report.valid.calls).toBeGreaterThan(0.5);
  });
});
