/**
 * Underwriting (SPEC.md "What the service does" 4, DECISIONS.md "Underwriting
 * policy"): one synchronous decision per loan, from the tenant's policy
 * version in force. Every rule is evaluated, in the documented order, and each
 * one that fires adds a reason, so a merchant sees every problem at once
 * rather than one per retry.
 */
import { DECISION_OUTCOMES, KYC_STATUSES } from "./vocabularies.ts";
import { displayAmount } from "./money.ts";

export { DECISION_OUTCOMES, KYC_STATUSES };
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];
export type KycStatus = (typeof KYC_STATUSES)[number];

export type UnderwritingPolicy = {
  version: number;
  requireKycVerified: boolean;
  /** A principal strictly above this (base units) waits for a reviewer; null: never. */
  manualReviewAbove: bigint | null;
  maxOpenLoansPerBorrower: number | null;
  /** Canonical addresses (see `canonicalAddress`), so one wallet typed two ways still matches. */
  blockedWallets: string[];
};

export type UnderwritingInput = {
  principal: bigint;
  /** Canonical address of the borrower's wallet. */
  walletAddress: string;
  borrowerKycStatus: KycStatus;
  /** The borrower's open loans (see `isOpen`), not counting the one being decided. */
  openLoansOfBorrower: number;
  /** A loan on a live chain (DECISIONS.md "Go-live certification", safe defaults); absent: sandbox. */
  live?: boolean;
  /** The tenant's setting `requiresKycBeforeFunding` (a KYC gate on funding). */
  requiresKycBeforeFunding?: boolean;
};

export type DecisionReason = { code: UnderwritingRuleCode; message: string };

export type Decision = {
  outcome: DecisionOutcome;
  reasons: DecisionReason[];
  policyVersion: number;
  decidedAt: Date;
};

export type UnderwritingRuleCode = "KYC_NOT_VERIFIED" | "WALLET_BLOCKED" | "MAX_OPEN_LOANS" | "MANUAL_REVIEW_AMOUNT" | "LIVE_KYC_POLICY_REQUIRED";

export type UnderwritingRule = {
  code: UnderwritingRuleCode;
  order: number;
  /** DECLINE wins over REVIEW: a loan some rule declines is never sent to a reviewer. */
  effect: "DECLINE" | "REVIEW";
  description: string;
};

/** The rules in evaluation order, as the API documentation prints them. */
export const UNDERWRITING_RULES: readonly UnderwritingRule[] = [
  {
    code: "KYC_NOT_VERIFIED",
    order: 1,
    effect: "DECLINE",
    description: "When the policy requires KYC, a borrower whose KYC status is not VERIFIED is declined.",
  },
  {
    code: "WALLET_BLOCKED",
    order: 2,
    effect: "DECLINE",
    description: "A borrower wallet on the policy's blocked list is declined.",
  },
  {
    code: "MAX_OPEN_LOANS",
    order: 3,
    effect: "DECLINE",
    description: "When the policy caps open loans per borrower, a borrower who already has that many open (unpaid, not declined) loans is declined.",
  },
  {
    code: "MANUAL_REVIEW_AMOUNT",
    order: 4,
    effect: "REVIEW",
    description: "When the policy sets a review threshold, a principal strictly above it waits for an ops reviewer, unless another rule declines.",
  },
  {
    code: "LIVE_KYC_POLICY_REQUIRED",
    order: 5,
    effect: "DECLINE",
    description:
      "A live loan is declined unless the policy requires VERIFIED KYC or the tenant's settings require KYC before funding: real money is never lent to an unverified borrower by default.",
  },
];

/** What a policy does until the tenant saves one: approve everything. */
export const DEFAULT_POLICY: UnderwritingPolicy = {
  version: 1,
  requireKycVerified: false,
  manualReviewAbove: null,
  maxOpenLoansPerBorrower: null,
  blockedWallets: [],
};

/** Two decimals when exact (every amount the API accepts), full precision otherwise, never a throw. */

/** The message of each rule when it fires; null when it does not. */
const CHECKS: Record<UnderwritingRuleCode, (p: UnderwritingPolicy, i: UnderwritingInput) => string | null> = {
  KYC_NOT_VERIFIED: (p, i) =>
    p.requireKycVerified && i.borrowerKycStatus !== "VERIFIED" ? `Borrower KYC status is ${i.borrowerKycStatus}; the policy requires VERIFIED` : null,
  WALLET_BLOCKED: (p, i) => (p.blockedWallets.includes(i.walletAddress) ? `Wallet ${i.walletAddress} is blocked by the policy` : null),
  MAX_OPEN_LOANS: (p, i) =>
    p.maxOpenLoansPerBorrower !== null && i.openLoansOfBorrower >= p.maxOpenLoansPerBorrower
      ? `Borrower has ${i.openLoansOfBorrower} open loan(s); the policy allows at most ${p.maxOpenLoansPerBorrower}`
      : null,
  MANUAL_REVIEW_AMOUNT: (p, i) =>
    p.manualReviewAbove !== null && i.principal > p.manualReviewAbove
      ? `Principal ${displayAmount(i.principal)} is above the manual review threshold of ${displayAmount(p.manualReviewAbove)}`
      : null,
  LIVE_KYC_POLICY_REQUIRED: (p, i) =>
    i.live && !p.requireKycVerified && !i.requiresKycBeforeFunding
      ? "A live loan needs a KYC requirement: set requireKycVerified in the policy (PUT /v1/policies) or requiresKycBeforeFunding in the settings"
      : null,
};

/**
 * Decides a loan under `policy` at `now`. An APPROVED decision has no reasons.
 *
 * @example underwrite(DEFAULT_POLICY, { principal: 100_000_000n, walletAddress: "0x…", borrowerKycStatus: "PENDING", openLoansOfBorrower: 0 }, now)
 * // { outcome: "APPROVED", reasons: [], policyVersion: 1, decidedAt: now }
 */
export function underwrite(policy: UnderwritingPolicy, input: UnderwritingInput, now: Date): Decision {
  const fired = UNDERWRITING_RULES.flatMap((rule) => {
    const message = CHECKS[rule.code](policy, input);
    return message === null ? [] : [{ rule, message }];
  });
  const outcome: DecisionOutcome = fired.some(({ rule }) => rule.effect === "DECLINE") ? "DECLINED" : fired.length > 0 ? "MANUAL_REVIEW" : "APPROVED";
  return {
    outcome,
    reasons: fired.map(({ rule, message }) => ({ code: rule.code, message })),
    policyVersion: policy.version,
    decidedAt: now,
  };
}

/**
 * The decline rules funding applies again before it reserves anything: the
 * borrower's KYC, a blocked wallet, and the live KYC requirement, as the
 * policy, the settings and the borrower are when funding starts (an approved
 * loan may wait days for liquidity or a wallet, and the merchant may have
 * failed the borrower's KYC or blocked the wallet meanwhile). Not
 * MAX_OPEN_LOANS (loans made after this one would count against it) nor the
 * review threshold (a reviewer or the decision already ruled on the amount).
 * The decision stays as recorded (SPEC.md: one decision); funding is held.
 * At funding, KYC_NOT_VERIFIED also fires for a borrower whose KYC is FAILED
 * when the tenant requires KYC before funding (the setting, or the loan's own
 * gate), whatever the policy: a merchant who failed the borrower after the
 * loan's KYC confirmation (of the loan, or of its widget credit line) never
 * wants the principal sent.
 */
export const RECHECKED_AT_FUNDING: readonly UnderwritingRuleCode[] = ["KYC_NOT_VERIFIED", "WALLET_BLOCKED", "LIVE_KYC_POLICY_REQUIRED"];

/**
 * Why an approved loan's funding is held now (see RECHECKED_AT_FUNDING): the
 * reasons of the rules that fire, in rule order; empty when none does.
 *
 * @example fundingHoldReasons({ ...DEFAULT_POLICY, requireKycVerified: true }, { ...input, borrowerKycStatus: "FAILED" })
 * // [{ code: "KYC_NOT_VERIFIED", message: "Borrower KYC status is FAILED; the policy requires VERIFIED" }]
 */
export function fundingHoldReasons(policy: UnderwritingPolicy, input: UnderwritingInput): DecisionReason[] {
  return UNDERWRITING_RULES.filter((rule) => RECHECKED_AT_FUNDING.includes(rule.code)).flatMap((rule) => {
    const message = CHECKS[rule.code](policy, input) ?? (rule.code === "KYC_NOT_VERIFIED" ? failedUnderFundingGate(input) : null);
    return message === null ? [] : [{ code: rule.code, message }];
  });
}

/** At funding: a FAILED borrower while the tenant (or the loan's own gate) requires KYC before funding. */
const failedUnderFundingGate = (i: UnderwritingInput): string | null =>
  i.requiresKycBeforeFunding && i.borrowerKycStatus === "FAILED"
    ? "Borrower KYC status is FAILED; KYC is required before funding (requiresKycBeforeFunding)"
    : null;
