import type { Chain, Stablecoin } from "../domain/rails.ts";
import type { AgreementTerms } from "../domain/agreement-terms.ts";

/**
 * A server-issued, single-use agreement challenge (SPEC.md "Loan-level KYC
 * confirmation and agreement"): bound to wallet, tenant, amount, tenure, chain
 * and stablecoin (and to the loan, or the widget program), valid 5 minutes on
 * the tenant's clock.
 */
export type AgreementChallenge = {
  id: string;
  tenantId: string;
  loanId: string | null;
  programId: string | null;
  walletAddress: string;
  amount: string;
  tenureDays: number;
  chain: Chain;
  stablecoin: Stablecoin;
  message: string;
  /**
   * The terms its message states (shared/domain/agreement-terms.ts): a draw
   * is made only on these. Absent on a challenge issued before they were
   * recorded (a challenge lives 5 minutes).
   */
  terms?: AgreementTerms;
  expiresAt: number;
  consumedAt: number | null;
  /**
   * What used it, when the use names itself: a widget accept's idempotency
   * scope and key, so a retry of that same accept is told apart from another
   * use. Absent or null: the API agreement, or a challenge of before.
   */
  consumedFor?: string | null;
  /** When the use that consumed it ended without its result (refused after the signature verified). The challenge stays used. */
  useFailedAt?: number | null;
};

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export type ConsumeResult = { ok: true; challenge: AgreementChallenge } | { ok: false; reason: "NOT_FOUND" | "USED" | "EXPIRED" };

/**
 * Where challenges live. In workers: a Durable Object per challenge, so two
 * uses race to exactly one; in the Bun tier: an in-memory map.
 */
export interface ChallengeStore {
  issue(challenge: AgreementChallenge): Promise<void>;
  get(id: string): Promise<AgreementChallenge | null>;
  /** Marks the challenge used (by `usedFor`, when given) if it is unused and unexpired at `nowMs`; exactly one caller wins. */
  consume(id: string, nowMs: number, usedFor?: string): Promise<ConsumeResult>;
  /** Records that the use that consumed the challenge ended without its result; it stays used. */
  useFailed(id: string, nowMs: number): Promise<void>;
}

/** The decision of `consume`, shared by every store so they agree exactly. */
export function consumeDecision(challenge: AgreementChallenge | null | undefined, nowMs: number, usedFor?: string): ConsumeResult {
  if (!challenge) return { ok: false, reason: "NOT_FOUND" };
  if (challenge.consumedAt !== null) return { ok: false, reason: "USED" };
  if (nowMs >= challenge.expiresAt) return { ok: false, reason: "EXPIRED" };
  return { ok: true, challenge: { ...challenge, consumedAt: nowMs, consumedFor: usedFor ?? null } };
}

/** The challenge after `useFailed`: only a used one records it, once. */
export function failedUse(challenge: AgreementChallenge | null | undefined, nowMs: number): AgreementChallenge | null {
  if (!challenge || challenge.consumedAt === null || challenge.useFailedAt) return null;
  return { ...challenge, useFailedAt: nowMs };
}

/** For the Bun tier (app.request tests); JavaScript's single thread makes consume atomic. */
export function memoryChallengeStore(): ChallengeStore {
  const items = new Map<string, AgreementChallenge>();
  return {
    async issue(c) {
      items.set(c.id, { ...c });
    },
    async get(id) {
      const c = items.get(id);
      return c ? { ...c } : null;
    },
    async consume(id, nowMs, usedFor) {
      const result = consumeDecision(items.get(id), nowMs, usedFor);
      if (result.ok) items.set(id, result.challenge);
      return result;
    },
    async useFailed(id, nowMs) {
      const failed = failedUse(items.get(id), nowMs);
      if (failed) items.set(id, failed);
    },
  };
}
