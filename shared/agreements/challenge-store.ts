import type { Chain, Stablecoin } from "../domain/rails.ts";

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
  expiresAt: number;
  consumedAt: number | null;
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
  /** Marks the challenge used if it is unused and unexpired at `nowMs`; exactly one caller wins. */
  consume(id: string, nowMs: number): Promise<ConsumeResult>;
}

/** The decision of `consume`, shared by every store so they agree exactly. */
export function consumeDecision(challenge: AgreementChallenge | null | undefined, nowMs: number): ConsumeResult {
  if (!challenge) return { ok: false, reason: "NOT_FOUND" };
  if (challenge.consumedAt !== null) return { ok: false, reason: "USED" };
  if (nowMs >= challenge.expiresAt) return { ok: false, reason: "EXPIRED" };
  return { ok: true, challenge: { ...challenge, consumedAt: nowMs } };
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
    async consume(id, nowMs) {
      const result = consumeDecision(items.get(id), nowMs);
      if (result.ok) items.set(id, result.challenge);
      return result;
    },
  };
}
