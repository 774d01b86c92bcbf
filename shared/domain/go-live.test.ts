import { describe, expect, test } from "bun:test";
import { evaluateGoLive, GO_LIVE_STEP_KEYS, notCertifiableMessage, type GoLiveFacts, type GoLiveStepKey } from "./go-live.ts";

const at = (i: number) => new Date(Date.UTC(2026, 0, 1 + i));
const TICKET = 10_000_000n;

/** Facts where exactly the steps whose bit is set in `mask` (bit i: step i + 1) hold. */
function factsFor(mask: number): GoLiveFacts {
  const holds = (key: GoLiveStepKey) => (mask & (1 << GO_LIVE_STEP_KEYS.indexOf(key))) !== 0;
  return {
    kyb: holds("KYB_APPROVED") ? { status: "APPROVED", submittedAt: at(0), decidedAt: at(1) } : null,
    commercialTermsAt: holds("COMMERCIAL_TERMS_AGREED") ? at(2) : null,
    policyActiveAt: holds("UNDERWRITING_POLICY_ACTIVE") ? at(3) : null,
    // Step 5 reads the product's minimum ticket: without an active product, no balance can cover it.
    product: holds("LOAN_PRODUCT_ACTIVE") || holds("LIQUIDITY_AVAILABLE") ? { activeSince: at(4), minPrincipal: TICKET } : null,
    liquidity: holds("LIQUIDITY_AVAILABLE")
      ? { verifiedAt: at(5), balance: TICKET, minPrincipal: TICKET }
      : { verifiedAt: at(5), balance: TICKET - 1n, minPrincipal: TICKET },
    webhookAt: holds("WEBHOOK_CONFIGURED") ? at(6) : null,
    apiKeyAt: holds("API_KEY_ISSUED") ? at(7) : null,
    ownerAt: holds("OWNER_EXISTS") ? at(8) : null,
    brandingAt: holds("BRANDING_CONFIGURED") ? at(9) : null,
    sandboxCycleAt: holds("SANDBOX_CYCLE_COMPLETED") ? at(10) : null,
  };
}
const EXPECTED_AT = [at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8), at(9), at(10)];

describe("evaluateGoLive", () => {
  test("all 2^10 combinations: DONE up to the first incomplete step, which is PENDING, every later one BLOCKED", () => {
    for (let mask = 0; mask < 1 << 10; mask++) {
      // LOAN_PRODUCT_ACTIVE without its bit still holds when step 5's bit is set (see factsFor).
      const effective = mask & (1 << 4) ? mask | (1 << 3) : mask;
      let first = 0;
      while (first < 10 && effective & (1 << first)) first++;
      const { nextStep, steps } = evaluateGoLive(factsFor(mask));
      expect(steps.map((s) => s.key)).toEqual([...GO_LIVE_STEP_KEYS]);
      expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(nextStep).toBe(first < 10 ? GO_LIVE_STEP_KEYS[first]! : null);
      for (const [i, s] of steps.entries()) {
        const status = i < first ? "DONE" : i === first ? "PENDING" : "BLOCKED";
        expect(s.status, `mask ${mask.toString(2)} step ${i + 1}`).toBe(status);
        expect(s.completedAt).toEqual(status === "DONE" ? EXPECTED_AT[i]! : null);
        expect(s.detail.length).toBeGreaterThan(0);
        if (status === "BLOCKED") expect(s.detail).toBe(`Blocked until step ${first + 1} (${GO_LIVE_STEP_KEYS[first]}) is done.`);
        expect(s.title.length).toBeGreaterThan(0);
      }
    }
  });

  test("each PENDING detail is one sentence saying what to do next", () => {
    for (let first = 0; first < 10; first++) {
      const { steps } = evaluateGoLive(factsFor((1 << first) - 1));
      const pending = steps[first]!;
      expect(pending.status).toBe("PENDING");
      expect(pending.detail).toMatch(/^[A-Z].*\.$/);
      expect(pending.detail.split(/\.\s/).length).toBe(1);
    }
  });

  test("KYB: none, submitted, rejected and approved each say their next step", () => {
    const base = factsFor(0);
    const kyb = (status: "SUBMITTED" | "REJECTED" | "APPROVED") =>
      evaluateGoLive({ ...base, kyb: { status, submittedAt: at(0), decidedAt: status === "SUBMITTED" ? null : at(1) } }).steps[0]!;
    expect(evaluateGoLive(base).steps[0]!.detail).toContain("POST /v1/go-live/kyb");
    expect(kyb("SUBMITTED")).toMatchObject({ status: "PENDING", detail: expect.stringContaining("wait for the platform operator") });
    expect(kyb("REJECTED")).toMatchObject({ status: "PENDING", detail: expect.stringContaining("rejected") });
    expect(kyb("APPROVED")).toMatchObject({ status: "DONE", completedAt: at(1) });
  });

  test("liquidity: no wallet, or a balance below the minimum ticket, keeps step 5 PENDING; exactly the ticket is enough", () => {
    const four = factsFor(0b1111);
    expect(evaluateGoLive({ ...four, liquidity: null })).toMatchObject({ nextStep: "LIQUIDITY_AVAILABLE" });
    expect(evaluateGoLive({ ...four, liquidity: null }).steps[4]!.detail).toContain("DISBURSEMENT wallet");
    expect(evaluateGoLive({ ...four, liquidity: { verifiedAt: at(5), balance: TICKET - 1n, minPrincipal: TICKET } }).nextStep).toBe("LIQUIDITY_AVAILABLE");
    expect(evaluateGoLive({ ...four, liquidity: { verifiedAt: at(5), balance: TICKET, minPrincipal: TICKET } }).nextStep).toBe("WEBHOOK_CONFIGURED");
  });

  test("the 409 message names the first incomplete step", () => {
    expect(notCertifiableMessage(evaluateGoLive(factsFor(0)))).toContain("KYB_APPROVED");
    expect(notCertifiableMessage(evaluateGoLive(factsFor(0b1111)))).toMatch(/^Go-live step 5 \(LIQUIDITY_AVAILABLE\) is not done: /);
  });
});
