import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { tenantSettings } from "../../db/schema/tenant-settings.ts";
import { agreements } from "../../db/schema/loan-records.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { businessRule, conflict, notFound, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { formatAmount } from "../domain/money.ts";
import { commitUpdate } from "../loans/commit-transition.ts";
import type { ContractSignatureVerifier } from "../chains/chain-port.ts";
import { CHALLENGE_TTL_MS, type AgreementChallenge, type ChallengeStore } from "./challenge-store.ts";
import { verifyEvmAgreementSignature } from "./evm-agreement-signature.ts";

const EVM_CHAINS = ["POLYGON_AMOY", "BASE_SEPOLIA", "POLYGON", "BASE"];

/** The human-readable text the borrower's wallet signs. */
export function agreementMessage(c: Omit<AgreementChallenge, "message" | "consumedAt">, merchant: string, totalDue: string): string {
  return [
    "svc credit loan agreement",
    `Merchant: ${merchant}`,
    `Wallet: ${c.walletAddress}`,
    `Amount: ${c.amount} ${c.stablecoin}`,
    `Tenure: ${c.tenureDays} days`,
    `Chain: ${c.chain}`,
    `Total due: ${totalDue} ${c.stablecoin}`,
    ...(c.loanId ? [`Loan: ${c.loanId}`] : []),
    `Challenge: ${c.id}`,
    `Expires: ${new Date(c.expiresAt).toISOString()}`,
    "By signing I accept these terms and agree to repay the total due from this wallet.",
  ].join("\n");
}

/** Issues a challenge for an API-originated loan's borrower (DECISIONS.md "Loans"). */
export async function issueLoanChallenge(db: Db, store: ChallengeStore, loan: LoanRow, tenantName: string, now: Date) {
  if (loan.status !== "CREATED") throw conflict(`An agreement can only be signed before funding; the loan is ${loan.status}`);
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
    expiresAt: now.getTime() + CHALLENGE_TTL_MS,
  };
  const challenge: AgreementChallenge = {
    ...base,
    message: agreementMessage(base, settings?.companyName ?? tenantName, formatAmount(loan.principal + loan.processingFee)),
    consumedAt: null,
  };
  await store.issue(challenge);
  return challenge;
}

/**
 * Verifies a signed agreement for a loan and consumes its challenge (SPEC.md
 * rules 2–4): the challenge must exist, belong to this tenant and loan, be
 * bound to the loan's current wallet, amount, tenure, chain and stablecoin,
 * be unexpired and unused, and the signature must be the wallet's over its
 * message (a smart-contract wallet's too, ERC-1271/ERC-6492, when `chain`
 * can call the chain). The challenge is consumed only once the signature
 * verifies, and then by exactly one caller. Returns the consumed challenge.
 */
export async function verifyLoanAgreement(
  store: ChallengeStore,
  input: { loan: LoanRow; challengeId: string; walletSignature: string; now: Date; chain?: ContractSignatureVerifier | null },
): Promise<AgreementChallenge> {
  const { loan } = input;
  if (loan.agreementId) throw conflict("An agreement is already on file for this loan; it is never overwritten");
  const challenge = await store.get(input.challengeId);
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
  if (challenge.consumedAt !== null) throw validationError(["agreementChallengeId: the challenge was already used"]);
  if (input.now.getTime() >= challenge.expiresAt) throw validationError(["agreementChallengeId: the challenge has expired"]);
  if (!EVM_CHAINS.includes(loan.chain)) {
    throw businessRule(`Agreement signatures on ${loan.chain} come with the widget; EVM chains (EIP-191) only for now`);
  }
  const valid = await verifyEvmAgreementSignature(input.chain, loan.chain, {
    address: challenge.walletAddress,
    message: challenge.message,
    signature: input.walletSignature,
  });
  if (!valid) throw validationError(["walletSignature: is not the borrower wallet's signature of the challenge message"]);
  const consumed = await store.consume(challenge.id, input.now.getTime());
  if (!consumed.ok) {
    throw validationError([`agreementChallengeId: the challenge ${consumed.reason === "EXPIRED" ? "has expired" : "was already used"}`]);
  }
  return consumed.challenge;
}

/**
 * Records the agreement (the exact text kept immutably: the merchant's
 * `agreementText` when given, else the signed message) and links it to the
 * loan in one batch. A second agreement for the loan: 409, the first stays.
 */
export async function recordLoanAgreement(
  db: Db,
  input: { loan: LoanRow; challenge: AgreementChallenge; walletSignature: string; agreementText: string | null; now: Date },
): Promise<LoanRow> {
  const { loan, challenge } = input;
  if (loan.agreementId) throw conflict("An agreement is already on file for this loan; it is never overwritten");
  const agreementId = newId();
  const next = await commitUpdate(db, loan, { agreementId }, input.now, (guard) => [
    insertIf(
      db,
      agreements,
      {
        id: agreementId,
        tenantId: loan.tenantId,
        loanId: loan.id,
        challengeId: challenge.id,
        walletAddress: challenge.walletAddress,
        chain: challenge.chain,
        message: challenge.message,
        agreementText: input.agreementText ?? challenge.message,
        walletSignature: input.walletSignature,
        createdAt: input.now,
      },
      guard,
    ),
  ]);
  if (!next) throw conflict("The loan changed while the agreement was being recorded; retry");
  return next;
}

/** The agreement on file for a loan (404 when there is none). */
export async function agreementOf(db: Db, tenantId: string, loanId: string) {
  const [a] = await db
    .select({ id: agreements.id, loanId: agreements.loanId, challengeId: agreements.challengeId, walletAddress: agreements.walletAddress, agreementText: agreements.agreementText, createdAt: agreements.createdAt })
    .from(agreements)
    .where(and(eq(agreements.tenantId, tenantId), eq(agreements.loanId, loanId)))
    .limit(1);
  if (!a) throw notFound("Agreement");
  return a;
}
