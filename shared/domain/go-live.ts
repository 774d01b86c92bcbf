/**
 * Go-live certification (DECISIONS.md "Go-live certification"): the 10 steps,
 * each a pure rule over facts loaded once. The steps are checked in order:
 * every step up to the first incomplete one is DONE, that one is PENDING
 * (its detail says what to do next), every later one is BLOCKED, whatever its
 * own facts say, so a merchant always sees one next thing to do. A BLOCKED
 * step has no completedAt: it is not complete until those before it are.
 */

export const GO_LIVE_STEP_KEYS = [
  "KYB_APPROVED",
  "COMMERCIAL_TERMS_AGREED",
  "UNDERWRITING_POLICY_ACTIVE",
  "LOAN_PRODUCT_ACTIVE",
  "LIQUIDITY_AVAILABLE",
  "WEBHOOK_CONFIGURED",
  "API_KEY_ISSUED",
  "OWNER_EXISTS",
  "BRANDING_CONFIGURED",
  "SANDBOX_CYCLE_COMPLETED",
] as const;
export type GoLiveStepKey = (typeof GO_LIVE_STEP_KEYS)[number];

export const GO_LIVE_STATUSES = ["DONE", "PENDING", "BLOCKED"] as const;
export type GoLiveStatus = (typeof GO_LIVE_STATUSES)[number];

export const KYB_STATUSES = ["SUBMITTED", "APPROVED", "REJECTED"] as const;
export type KybStatus = (typeof KYB_STATUSES)[number];

/** What certification reads about a tenant, loaded once (shared/go-live/go-live-facts.ts). */
export type GoLiveFacts = {
  /** The latest KYB submission, or null when none was ever submitted. */
  kyb: { status: KybStatus; submittedAt: Date; decidedAt: Date | null } | null;
  /** When the operator recorded commercial terms (the first time), or null. */
  commercialTermsAt: Date | null;
  /** When the current underwriting policy version was saved, or null when the tenant has none. */
  policyActiveAt: Date | null;
  /** The active loan product with the smallest minimum ticket, or null when none is active. */
  product: { activeSince: Date; minPrincipal: bigint } | null;
  /**
   * A verified live DISBURSEMENT wallet's balance (net of what its live pool holds reserved), and the smallest minimum
   * ticket of the active products on its chain, which the balance must cover; `walletId`: that wallet (certification
   * asserts it is still there in its own write).
   */
  liquidity: { verifiedAt: Date; balance: bigint; minPrincipal: bigint; walletId?: string } | null;
  /** When the first active webhook endpoint was created, or null. */
  webhookAt: Date | null;
  /** When the first unrevoked API key was created, or null. */
  apiKeyAt: Date | null;
  /** When the tenant's OWNER was created, or null. */
  ownerAt: Date | null;
  /** When branding with a non-empty company name was last saved, or null. */
  brandingAt: Date | null;
  /** When a sandbox loan that was funded was repaid in full, the first such time, or null. */
  sandboxCycleAt: Date | null;
};

export type GoLiveStep = {
  step: number;
  key: GoLiveStepKey;
  title: string;
  status: GoLiveStatus;
  detail: string;
  completedAt: Date | null;
};

export type GoLiveEvaluation = { nextStep: GoLiveStepKey | null; steps: GoLiveStep[] };

/** A rule: whether its fact holds (and since when), what to do when it does not, and what DONE says. */
type Rule = {
  title: string;
  check: (facts: GoLiveFacts) => { done: true; at: Date | null } | { done: false; todo: string };
  doneText: string;
};

const when = (at: Date | null | undefined) => (at ? { done: true as const, at } : null);

const RULES: Record<GoLiveStepKey, Rule> = {
  KYB_APPROVED: {
    title: "Business verification (KYB) approved",
    doneText: "The platform operator approved your business verification.",
    check: (f) => {
      if (f.kyb?.status === "APPROVED") return { done: true, at: f.kyb.decidedAt };
      if (f.kyb?.status === "SUBMITTED") return { done: false, todo: "Your business verification is submitted; wait for the platform operator to review it." };
      if (f.kyb?.status === "REJECTED")
        return {
          done: false,
          todo: "The platform operator rejected your business verification; read the note in the audit and submit it again with POST /v1/go-live/kyb.",
        };
      return { done: false, todo: "Submit your business verification (legal name, registration number, country and documents) with POST /v1/go-live/kyb." };
    },
  },
  COMMERCIAL_TERMS_AGREED: {
    title: "Commercial terms agreed",
    doneText: "The platform operator recorded your commercial terms.",
    check: (f) => when(f.commercialTermsAt) ?? { done: false, todo: "Agree commercial terms with the platform operator, who records them for you." },
  },
  UNDERWRITING_POLICY_ACTIVE: {
    title: "Underwriting policy active",
    doneText: "An underwriting policy is active.",
    check: (f) => when(f.policyActiveAt) ?? { done: false, todo: "Save an underwriting policy with PUT /v1/policies." },
  },
  LOAN_PRODUCT_ACTIVE: {
    title: "Loan product active",
    doneText: "A loan product is active.",
    check: (f) => when(f.product?.activeSince) ?? { done: false, todo: "Activate a loan product in a merchant configuration (PUT /v1/merchant-configs/{id})." },
  },
  LIQUIDITY_AVAILABLE: {
    title: "Live liquidity available",
    doneText: "A verified live DISBURSEMENT wallet holds at least the minimum ticket of an active loan product on its chain.",
    check: (f) => {
      if (f.liquidity && f.product && f.liquidity.balance >= f.liquidity.minPrincipal) return { done: true, at: f.liquidity.verifiedAt };
      return {
        done: false,
        todo: "Add a live DISBURSEMENT wallet on the chain of an active loan product, prove you control it and fund it with at least that product's minimum ticket in stablecoin.",
      };
    },
  },
  WEBHOOK_CONFIGURED: {
    title: "Webhook configured",
    doneText: "A webhook endpoint is configured.",
    check: (f) => when(f.webhookAt) ?? { done: false, todo: "Register a webhook endpoint with POST /v1/webhooks." },
  },
  API_KEY_ISSUED: {
    title: "API key issued",
    doneText: "An API key is issued.",
    check: (f) => when(f.apiKeyAt) ?? { done: false, todo: "Create an API key for your backend with POST /v1/api-keys." },
  },
  OWNER_EXISTS: {
    title: "Owner account exists",
    doneText: "Your account has an owner.",
    check: (f) => when(f.ownerAt) ?? { done: false, todo: "Your account needs an OWNER user; contact the platform operator." },
  },
  BRANDING_CONFIGURED: {
    title: "Branding configured",
    doneText: "Branding with a company name is configured.",
    check: (f) => when(f.brandingAt) ?? { done: false, todo: "Set your company name in the branding settings (PUT /v1/settings)." },
  },
  SANDBOX_CYCLE_COMPLETED: {
    title: "Sandbox cycle completed",
    doneText: "A sandbox loan was funded and repaid.",
    check: (f) => when(f.sandboxCycleAt) ?? { done: false, todo: "Complete a sandbox cycle: create a sandbox loan, let it be funded, then repay it in full." },
  },
};

/** The 10 steps in order, with their statuses, and the first incomplete step's key (null when all are DONE). */
export function evaluateGoLive(facts: GoLiveFacts): GoLiveEvaluation {
  let nextStep: GoLiveStepKey | null = null;
  const steps = GO_LIVE_STEP_KEYS.map((key, i): GoLiveStep => {
    const rule = RULES[key];
    const base = { step: i + 1, key, title: rule.title };
    const result = rule.check(facts);
    if (nextStep !== null) {
      const first = GO_LIVE_STEP_KEYS.indexOf(nextStep) + 1;
      return { ...base, status: "BLOCKED", detail: `Blocked until step ${first} (${nextStep}) is done.`, completedAt: null };
    }
    if (result.done) return { ...base, status: "DONE", detail: rule.doneText, completedAt: result.at };
    nextStep = key;
    return { ...base, status: "PENDING", detail: result.todo, completedAt: null };
  });
  return { nextStep, steps };
}

/** The 409 message of a certification attempt before every step is DONE. */
export const notCertifiableMessage = (evaluation: GoLiveEvaluation): string => {
  const pending = evaluation.steps.find((s) => s.status === "PENDING")!;
  return `Go-live step ${pending.step} (${pending.key}) is not done: ${pending.detail}`;
};
