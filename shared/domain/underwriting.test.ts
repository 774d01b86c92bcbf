import { describe, expect, test } from "bun:test";
import {
  DECISION_OUTCOMES,
  DEFAULT_POLICY,
  fundingHoldReasons,
  KYC_STATUSES,
  underwrite,
  UNDERWRITING_RULES,
  type UnderwritingInput,
  type UnderwritingPolicy,
} from "./underwriting.ts";

const NOW = new Date("2026-11-21T10:00:00.000Z");
const WALLET = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
const OTHER_WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

/** A policy with every rule switched on: KYC required, review above 500.00, at most 2 open loans, one blocked wallet. */
const STRICT: UnderwritingPolicy = {
  version: 7,
  requireKycVerified: true,
  manualReviewAbove: 500_000_000n,
  maxOpenLoansPerBorrower: 2,
  blockedWallets: [OTHER_WALLET, WALLET],
};

/** An input that fires no rule under STRICT. */
const CLEAN: UnderwritingInput = {
  principal: 100_000_000n,
  walletAddress: "0x0000000000000000000000000000000000000001",
  borrowerKycStatus: "VERIFIED",
  openLoansOfBorrower: 0,
};

describe("underwrite: every combination of the four rules", () => {
  // Bit i set: rule i+1 fires.
  for (let mask = 0; mask < 16; mask++) {
    const kyc = (mask & 1) !== 0;
    const blocked = (mask & 2) !== 0;
    const maxOpen = (mask & 4) !== 0;
    const review = (mask & 8) !== 0;
    const name = [kyc && "KYC", blocked && "BLOCKED", maxOpen && "MAX_OPEN", review && "REVIEW"].filter(Boolean).join("+");

    test(name || "none fires", () => {
      const input: UnderwritingInput = {
        principal: review ? 500_010_000n : 100_000_000n,
        walletAddress: blocked ? WALLET : CLEAN.walletAddress,
        borrowerKycStatus: kyc ? "PENDING" : "VERIFIED",
        openLoansOfBorrower: maxOpen ? 5 : 1,
      };
      const expectedCodes = [kyc && "KYC_NOT_VERIFIED", blocked && "WALLET_BLOCKED", maxOpen && "MAX_OPEN_LOANS", review && "MANUAL_REVIEW_AMOUNT"].filter(
        (c): c is string => typeof c === "string",
      );
      const expectedOutcome = kyc || blocked || maxOpen ? "DECLINED" : review ? "MANUAL_REVIEW" : "APPROVED";

      const d = underwrite(STRICT, input, NOW);
      expect(d.outcome).toBe(expectedOutcome);
      expect(d.reasons.map((r): string => r.code)).toEqual(expectedCodes);
      expect(d.policyVersion).toBe(7);
      expect(d.decidedAt).toBe(NOW);
      for (const r of d.reasons) expect(r.message.length).toBeGreaterThan(0);
    });
  }
});

describe("underwrite: messages", () => {
  test("each reason says what fired", () => {
    const d = underwrite(STRICT, { principal: 750_500_000n, walletAddress: WALLET, borrowerKycStatus: "FAILED", openLoansOfBorrower: 3 }, NOW);
    expect(d.reasons).toEqual([
      { code: "KYC_NOT_VERIFIED", message: "Borrower KYC status is FAILED; the policy requires VERIFIED" },
      { code: "WALLET_BLOCKED", message: `Wallet ${WALLET} is blocked by the policy` },
      { code: "MAX_OPEN_LOANS", message: "Borrower has 3 open loan(s); the policy allows at most 2" },
      { code: "MANUAL_REVIEW_AMOUNT", message: "Principal 750.50 is above the manual review threshold of 500.00" },
    ]);
  });

  test("an amount that is not whole cents is shown, not thrown on", () => {
    const d = underwrite({ ...STRICT, manualReviewAbove: 1_234_567n }, { ...CLEAN, principal: 2_000_001n }, NOW);
    expect(d.reasons).toEqual([{ code: "MANUAL_REVIEW_AMOUNT", message: "Principal 2.000001 is above the manual review threshold of 1.234567" }]);
  });
});

describe("underwrite: boundaries", () => {
  test("a principal equal to the threshold is not reviewed; one unit above is", () => {
    expect(underwrite(STRICT, { ...CLEAN, principal: 500_000_000n }, NOW).outcome).toBe("APPROVED");
    expect(underwrite(STRICT, { ...CLEAN, principal: 500_000_001n }, NOW).outcome).toBe("MANUAL_REVIEW");
  });

  test("open loans equal to the maximum decline; one fewer does not", () => {
    expect(underwrite(STRICT, { ...CLEAN, openLoansOfBorrower: 2 }, NOW).outcome).toBe("DECLINED");
    expect(underwrite(STRICT, { ...CLEAN, openLoansOfBorrower: 1 }, NOW).outcome).toBe("APPROVED");
  });

  test("a maximum of 0 open loans declines everyone", () => {
    const d = underwrite({ ...STRICT, maxOpenLoansPerBorrower: 0 }, CLEAN, NOW);
    expect(d.outcome).toBe("DECLINED");
    expect(d.reasons.map((r) => r.code)).toEqual(["MAX_OPEN_LOANS"]);
  });

  test("a threshold of 0 reviews every loan", () => {
    expect(underwrite({ ...STRICT, manualReviewAbove: 0n }, CLEAN, NOW).outcome).toBe("MANUAL_REVIEW");
  });

  test("KYC: only VERIFIED passes when required; any status passes when not", () => {
    for (const status of KYC_STATUSES) {
      expect(underwrite(STRICT, { ...CLEAN, borrowerKycStatus: status }, NOW).outcome).toBe(status === "VERIFIED" ? "APPROVED" : "DECLINED");
      expect(underwrite({ ...STRICT, requireKycVerified: false }, { ...CLEAN, borrowerKycStatus: status }, NOW).outcome).toBe("APPROVED");
    }
  });

  test("blocked wallets match the canonical address exactly", () => {
    // Callers canonicalize first; a differently-cased string is not the stored form.
    expect(underwrite(STRICT, { ...CLEAN, walletAddress: WALLET.toLowerCase() }, NOW).outcome).toBe("APPROVED");
    expect(underwrite(STRICT, { ...CLEAN, walletAddress: OTHER_WALLET }, NOW).outcome).toBe("DECLINED");
  });
});

describe("DEFAULT_POLICY", () => {
  test("is version 1 and approves anything", () => {
    expect(DEFAULT_POLICY).toEqual({
      version: 1,
      requireKycVerified: false,
      manualReviewAbove: null,
      maxOpenLoansPerBorrower: null,
      blockedWallets: [],
    });
    for (const status of KYC_STATUSES) {
      expect(
        underwrite(DEFAULT_POLICY, { principal: 1_000_000_000n, walletAddress: WALLET, borrowerKycStatus: status, openLoansOfBorrower: 1_000 }, NOW),
      ).toEqual({ outcome: "APPROVED", reasons: [], policyVersion: 1, decidedAt: NOW });
    }
  });
});

describe("underwrite: the live safe default (LIVE_KYC_POLICY_REQUIRED)", () => {
  // Every combination of live × policy KYC × the settings' KYC gate.
  for (let mask = 0; mask < 8; mask++) {
    const live = (mask & 1) !== 0;
    const policyKyc = (mask & 2) !== 0;
    const gate = (mask & 4) !== 0;
    test(`live ${live}, requireKycVerified ${policyKyc}, requiresKycBeforeFunding ${gate}`, () => {
      const policy = { ...DEFAULT_POLICY, requireKycVerified: policyKyc };
      const d = underwrite(policy, { ...CLEAN, live, requiresKycBeforeFunding: gate }, NOW);
      const fires = live && !policyKyc && !gate;
      expect(d.outcome).toBe(fires ? "DECLINED" : "APPROVED");
      expect(d.reasons.map((r) => r.code)).toEqual(fires ? ["LIVE_KYC_POLICY_REQUIRED"] : []);
    });
  }
  test("a sandbox loan (no mode given) never fires it", () => {
    expect(underwrite(DEFAULT_POLICY, CLEAN, NOW).outcome).toBe("APPROVED");
  });
});

describe("UNDERWRITING_RULES", () => {
  test("lists the rules in evaluation order with their effects", () => {
    expect(UNDERWRITING_RULES.map((r) => [r.order, r.code, r.effect])).toEqual([
      [1, "KYC_NOT_VERIFIED", "DECLINE"],
      [2, "WALLET_BLOCKED", "DECLINE"],
      [3, "MAX_OPEN_LOANS", "DECLINE"],
      [4, "MANUAL_REVIEW_AMOUNT", "REVIEW"],
      [5, "LIVE_KYC_POLICY_REQUIRED", "DECLINE"],
    ]);
    for (const r of UNDERWRITING_RULES) expect(r.description.length).toBeGreaterThan(20);
  });

  test("outcomes are the spec's three", () => {
    expect([...DECISION_OUTCOMES]).toEqual(["APPROVED", "DECLINED", "MANUAL_REVIEW"]);
  });
});

describe("fundingHoldReasons: the decline rules applied again when funding starts", () => {
  test("KYC failed, the wallet blocked, the live KYC requirement dropped: those reasons in rule order; open loans and the amount are never judged again", () => {
    expect(fundingHoldReasons(STRICT, CLEAN)).toEqual([]);
    // Loans made after this one, or an amount a reviewer passed: not reasons to hold it now.
    expect(fundingHoldReasons(STRICT, { ...CLEAN, openLoansOfBorrower: 9, principal: 900_000_000n })).toEqual([]);
    expect(fundingHoldReasons(STRICT, { ...CLEAN, borrowerKycStatus: "FAILED", walletAddress: WALLET })).toEqual([
      { code: "KYC_NOT_VERIFIED", message: "Borrower KYC status is FAILED; the policy requires VERIFIED" },
      { code: "WALLET_BLOCKED", message: `Wallet ${WALLET} is blocked by the policy` },
    ]);
    const relaxed = { ...DEFAULT_POLICY, version: 3 };
    expect(fundingHoldReasons(relaxed, { ...CLEAN, live: true }).map((r) => r.code)).toEqual(["LIVE_KYC_POLICY_REQUIRED"]);
    expect(fundingHoldReasons(relaxed, { ...CLEAN, live: true, requiresKycBeforeFunding: true })).toEqual([]);
    expect(fundingHoldReasons(relaxed, CLEAN)).toEqual([]);
  });

  test("a FAILED borrower is held when the tenant requires KYC before funding, whatever the policy (the merchant failed it after the loan's or line's confirmation); PENDING is not (the loan's own confirmation is the gate)", () => {
    const relaxed = { ...DEFAULT_POLICY, version: 3 };
    expect(fundingHoldReasons(relaxed, { ...CLEAN, borrowerKycStatus: "FAILED", requiresKycBeforeFunding: true })).toEqual([
      { code: "KYC_NOT_VERIFIED", message: "Borrower KYC status is FAILED; KYC is required before funding (requiresKycBeforeFunding)" },
    ]);
    expect(fundingHoldReasons(relaxed, { ...CLEAN, borrowerKycStatus: "FAILED", requiresKycBeforeFunding: true, live: true }).map((r) => r.code)).toEqual([
      "KYC_NOT_VERIFIED",
    ]);
    expect(fundingHoldReasons(relaxed, { ...CLEAN, borrowerKycStatus: "PENDING", requiresKycBeforeFunding: true })).toEqual([]);
    expect(fundingHoldReasons(relaxed, { ...CLEAN, borrowerKycStatus: "FAILED" })).toEqual([]);
    // The policy's own message when both apply.
    expect(fundingHoldReasons(STRICT, { ...CLEAN, borrowerKycStatus: "FAILED", requiresKycBeforeFunding: true })[0]!.message).toBe(
      "Borrower KYC status is FAILED; the policy requires VERIFIED",
    );
  });
});
