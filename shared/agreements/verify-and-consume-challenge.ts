import { DomainError, validationError } from "../domain/errors.ts";
import type { AgreementChallenge, ChallengeStore } from "./challenge-store.ts";
import { verifyWalletSignature, type TonSignDataFields, type WalletSignatureDeps } from "./verify-wallet-signature.ts";

export type SignedChallenge = {
  /** The challenge as read (already checked to belong to the caller's loan or program and terms). */
  challenge: AgreementChallenge;
  walletSignature: string;
  ton?: Partial<TonSignDataFields> | null;
  /** TON Connect domains a signature may name. */
  allowedDomains: readonly string[];
  /** The tenant's clock: challenges expire on it. */
  now: Date;
  /** What uses it (a widget accept's idempotency scope and key), recorded with the use. */
  usedFor?: string;
  /** The real time, for a TON signature's own timestamp (the wallet's clock is real). */
  realNow: Date;
};

/** The refusal of a challenge some use already consumed (a caller may tell it apart: `isChallengeUsed`). */
export const CHALLENGE_USED = "agreementChallengeId: the challenge was already used";
const usedOrExpired = (reason: string) => validationError([reason === "EXPIRED" ? "agreementChallengeId: the challenge has expired" : CHALLENGE_USED]);

/** Whether `err` is the refusal of an already used challenge. */
export const isChallengeUsed = (err: unknown): boolean => err instanceof DomainError && err.kind === "VALIDATION" && err.detail[0] === CHALLENGE_USED;

/**
 * The one way a challenge is used (DECISIONS.md "Embed and widget": "a
 * challenge is consumed by the first accept that verifies, whatever happens
 * next"), for the API agreement and the widget accept alike: refuse a used
 * or expired challenge, verify the wallet's signature of its message, and
 * consume it at once, before any other business check of the caller (KYC,
 * the credit line), so a later refusal leaves it used. Of concurrent callers
 * with a valid signature exactly one consumes (the store's atomic
 * `consume`); the others get 400 "already used". A bad signature consumes
 * nothing (400 naming the field), nor does an unreachable chain (503).
 * Returns the consumed challenge.
 */
export async function verifyAndConsumeChallenge(store: ChallengeStore, deps: WalletSignatureDeps, input: SignedChallenge): Promise<AgreementChallenge> {
  const { challenge } = input;
  if (challenge.consumedAt !== null) throw usedOrExpired("USED");
  if (input.now.getTime() >= challenge.expiresAt) throw usedOrExpired("EXPIRED");
  const verified = await verifyWalletSignature(deps, {
    chain: challenge.chain,
    address: challenge.walletAddress,
    message: challenge.message,
    signature: input.walletSignature,
    ton: input.ton,
    allowedDomains: input.allowedDomains,
    now: input.realNow,
  });
  if (!verified.ok) throw validationError([verified.reason]);
  const consumed = await store.consume(challenge.id, input.now.getTime(), input.usedFor);
  if (!consumed.ok) throw usedOrExpired(consumed.reason);
  return consumed.challenge;
}
