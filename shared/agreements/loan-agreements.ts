import { eq } from "drizzle-orm";
import { type AgreementTerms, termsOf } from "../domain/agreement-terms.ts";
import { merchantName } from "../domain/plain-text.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { conflict, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { formatAmount } from "../domain/money.ts";
import { commitUpdate } from "../loans/commit-transition.ts";
import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import { CHALLENGE_TTL_MS, type AgreementChallenge } from "./challenge-store.ts";
import { agreementInsertIf, agreementRecord } from "./agreement-record.ts";
import { verifyAndConsumeChallenge } from "./verify-and-consume-challenge.ts";
import type { TonSignDataFields } from "./verify-wallet-signature.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * The human-readable text the borrower's wallet signs: who lends, to which
 * wallet, how much, for how long, on which chain, and what the borrower then
 * owes (the total due, the late fee past the due date, when it defaults).
 * `merchant` is on one line (shared/domain/plain-text.ts `merchantName`).
 */
export function agreementMessage(c: Omit<AgreementChallenge, "message" | "consumedAt" | "terms"> & { terms: AgreementTerms }, merchant: string): string {
  const { terms } = c;
  return [
    "svc credit loan agreement",
    `Merchant: ${merchant}`,
    `Wallet: ${c.walletAddress}`,
    `Amount: ${c.amount} ${c.stablecoin}`,
    `Tenure: ${c.tenureDays} days`,
    `Chain: ${c.chain}`,
    `Total due: ${terms.totalDue} ${c.stablecoin}`,
    `Late fee: ${terms.dailyLateFee} ${c.stablecoin} for each started day past the due date, until repaid or defaulted`,
    `Default: ${terms.gracePeriodDays} days past the due date, if still unpaid`,
    ...(c.loanId ? [`Loan: ${c.loanId}`] : []),
    `Challenge: ${c.id}`,
    `Expires: ${new Date(c.expiresAt).toISOString()}`,
    "By signing I accept these terms and agree to repay the total due from this wallet.",
  ].join("\n");
}

/**
 * Only a loan that may still be funded takes an agreement: CREATED and not
 * declined (by underwriting or by a review's REJECT). A declined loan is
 * never funded, so a borrower would sign to repay a loan that never comes.
 */
function assertAgreeable(loan: LoanRow) {
  if (loan.status !== "CREATED") throw conflict(`An agreement can only be signed before funding; the loan is ${loan.status}`);
  if (loan.decisionOutcome === "DECLINED") throw conflict("The loan was declined and is never funded: there is no agreement to sign");
}

/** Issues a challenge for an API-originated loan's borrower (DECISIONS.md "Loans"). */
export async function issueLoanChallenge(
  { db, challenges }: Pick<VerbDeps, "db" | "challenges">,
  { loan, tenantName, now }: { loan: LoanRow; tenantName: string; now: Date },
) {
  assertAgreeable(loan);
  if (loan.agreementId) throw conflict("An agreement is already on file for this loan");
  const [settings] = await db.select({ companyName: tenantSettings.companyName }).from(tenantSettings).where(eq(tenantSettings.tenantId, loan.tenantId));
  const base = {
    id: newId(),
    tenantId: loan.tenantId,
    loanId: loan.id,
    programId: loan.programId,
    walletAddress: loan.borrowerWalletAddress,
    amount: formatAmount(loan.principal),
    tenureDays: loan.tenureDays,
    chain: loan.chain,
    stablecoin: loan.stablecoin,
    terms: termsOf(loan),
    expiresAt: now.getTime() + CHALLENGE_TTL_MS,
  };
  const challenge: AgreementChallenge = {
    ...base,
    message: agreementMessage(base, merchantName(settings?.companyName, tenantName)),
    consumedAt: null,
  };
  await challenges.issue(challenge);
  return challenge;
}

/**
 * Verifies a signed agreement for a loan and consumes its challenge (SPEC.md
 * rules 2–4): the challenge must exist, belong to this tenant and loan, be
 * bound to the loan's current wallet, amount, tenure, chain and stablecoin,
 * be unexpired and unused, and the signature must be the wallet's over its
 * message on the loan's chain (`verifyWalletSignature`: EIP-191 with the
 * ERC-1271/6492 fallback, TON Connect signData with `ton`, Solana ed25519).
 * The challenge is consumed as soon as the signature verifies
 * (`verifyAndConsumeChallenge`), by exactly one caller. Returns the consumed
 * challenge.
 */
export async function verifyLoanAgreement(
  { challenges, chain }: Pick<VerbDeps, "challenges"> & { chain?: ContractSignatureVerifier | null },
  input: {
    loan: LoanRow;
    challengeId: string;
    walletSignature: string;
    ton?: Partial<TonSignDataFields> | null;
    /** TON Connect domains the signature may name (`apiAgreementDomains`). */
    allowedDomains: readonly string[];
    /** The tenant's clock (challenge expiry) and the real one (a TON signature's timestamp). */
    now: Date;
    realNow: Date;
  },
): Promise<AgreementChallenge> {
  const { loan } = input;
  if (loan.agreementId) throw conflict("An agreement is already on file for this loan; it is never overwritten");
  // Before the challenge is consumed: a loan declined since the challenge was issued leaves it unused.
  assertAgreeable(loan);
  const challenge = await challenges.get(input.challengeId);
  if (!challenge || challenge.tenantId !== loan.tenantId || challenge.loanId !== loan.id) {
    throw validationError(["agreementChallengeId: no such challenge for this loan"]);
  }
  const bound =
    challenge.walletAddress === loan.borrowerWalletAddress &&
    challenge.amount === formatAmount(loan.principal) &&
    challenge.tenureDays === loan.tenureDays &&
    challenge.chain === loan.chain &&
    challenge.stablecoin === loan.stablecoin;
  if (!bound) throw validationError(["agreementChallengeId: the challenge does not match the loan's terms"]);
  return verifyAndConsumeChallenge(
    challenges,
    { contracts: chain },
    {
      challenge,
      walletSignature: input.walletSignature,
      ton: input.ton,
      allowedDomains: input.allowedDomains,
      now: input.now,
      realNow: input.realNow,
    },
  );
}

/**
 * Records the agreement (the exact text kept immutably: the merchant's
 * `agreementText` when given, else the signed message; the signature, and
 * on TON its public key, timestamp and domain) and links it to the loan in
 * one batch. A second agreement for the loan: 409, the first stays.
 */
export async function recordLoanAgreement(
  { db }: Pick<VerbDeps, "db">,
  input: {
    loan: LoanRow;
    challenge: AgreementChallenge;
    walletSignature: string;
    ton?: Partial<TonSignDataFields> | null;
    agreementText: string | null;
    now: Date;
  },
): Promise<LoanRow> {
  const { loan } = input;
  if (loan.agreementId) throw conflict("An agreement is already on file for this loan; it is never overwritten");
  const record = agreementRecord(input);
  const next = await commitUpdate(db, loan, { agreementId: record.id }, input.now, (guard) => [agreementInsertIf(db, record, loan, guard)]);
  if (!next) throw conflict("The loan changed while the agreement was being recorded; retry");
  return next;
}
