import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createTestApp, type TestApp } from "../../shared/testing/harness.ts";
import { newWallet } from "../../shared/testing/loan-fixtures.ts";
import { fuzzDocument, type FuzzReport } from "../../shared/testing/openapi-fuzz.ts";
import type { OpenApiDoc } from "../../shared/testing/openapi-values.ts";
import { PARAM_RESOURCES, paramKey, seededTenant, type SeededTenant } from "../../shared/testing/seeded-tenant.ts";
import { WIDGET_APP_ENTRY } from "./client-assets.generated.ts";
import { createEmbedTestApp } from "./testing/harness.ts";

let t: TestApp;
let e: ReturnType<typeof createEmbedTestApp>;
let m: SeededTenant;
let doc: OpenApiDoc;
/** A draw quoted and signed by a wallet the test holds, so accept's canonical call can succeed. */
let signed: { walletAddress: string; amount: string; tenureDays: number; agreementChallengeId: string; walletSignature: string };
beforeAll(async () => {
  t = await createTestApp();
  e = createEmbedTestApp(t);
  m = await seededTenant(t, "Embed fuzzed");
  doc = (await e.request("GET", "/openapi.json")).body;
  const wallet = privateKeyToAccount(generatePrivateKey());
  const draw = { walletAddress: wallet.address, amount: "50.00", tenureDays: 7 };
  const quote = await e.request("POST", `/v1/embed/${m.embedKey}/quote`, { body: draw });
  if (quote.status !== 200) throw new Error(`quote failed: ${quote.status} ${JSON.stringify(quote.body)}`);
  const challenge = quote.body.agreementChallenge;
  signed = { ...draw, agreementChallengeId: challenge.id, walletSignature: await wallet.signMessage({ message: challenge.message }) };
});
afterAll(() => t.close());

let n = 0;
const fresh = <T>(make: () => T) => fc.constant(null).map(() => make());

describe("the embed document, fuzzed with a real embed key, real loans and generated bodies", () => {
  let report: FuzzReport;
  test("no 5xx; every 4xx of the API with the spec's error body; invalid bodies get 400 naming the field", async () => {
    report = await fuzzDocument({
      doc,
      request: (method, path, init) => e.request(method, path, init),
      seed: 20_260_111,
      validRuns: 8,
      // The widget's asset names are content-hashed files, not tenant data: the app's entry is a real one.
      pathValues: (op, name) => (name === "name" ? [WIDGET_APP_ENTRY] : (PARAM_RESOURCES[paramKey(op.path, name)]?.(m) ?? null)),
      credentials: () => ({}),
      hints: (op) => ({
        // Half the draws from the wallet of the seeded credit line, half from new wallets.
        walletAddress: fc.oneof(fc.constant(m.creditLineWallet), fresh(newWallet)),
        amount: fc.constantFrom("10.00", "25.50", "100.00", "999.99"),
        tenureDays: fc.constantFrom(3, 7, 15),
        idempotencyKey: fresh(() => `embed-fuzz-${++n}`),
        // accept: the signed draw (its first call makes the loan; the challenge is then used up).
        ...(op.path.endsWith("/accept") ? Object.fromEntries(Object.entries(signed).map(([k, v]) => [k, fc.constant(v)])) : {}),
      }),
    });
    expect(report.unfillable, "path parameters the fuzzer cannot fill with a real value").toEqual([]);
    expect(report.failures).toEqual([]);
  });

  test("the valid calls get past validation: most answer 2xx", () => {
    const ok = Object.entries(report.valid.byStatus).reduce((sum, [status, count]) => sum + (Number(status) < 300 ? count : 0), 0);
    if (process.env.FUZZ_VERBOSE) console.log(report.valid.rejected.join("\n"));
    console.log(
      `embed fuzz: ${report.operations} operations, ${report.valid.calls} valid calls ${JSON.stringify(report.valid.byStatus)}, ${report.invalid.calls} invalid calls`,
    );
    expect(report.operations).toBe(Object.values(doc.paths).reduce((sum, ops) => sum + Object.keys(ops).length, 0));
    expect(ok / report.valid.calls).toBeGreaterThan(0.5);
  });
});
