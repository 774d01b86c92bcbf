import { and, eq } from "drizzle-orm";
import { borrowers } from "../../db/schema/borrowers.ts";
import { borrowerIdOfRef, openLoansOfBorrowerQuery } from "../loans/decide-loan.ts";
import { currentPolicy } from "../underwriting/policies.ts";
import { creditLineFor, requiresKyc, walletFor } from "./credit-lines.ts";
import type { VerbDeps } from "../verbs.ts";
import type { ProgramContext } from "./program-context.ts";
import { embedKeyMode } from "../auth/api-keys.ts";

const WALLET_BLOCKED = { code: "WALLET_BLOCKED", message: "This wallet cannot borrow from this merchant" };
const KYC_REQUIRED = { code: "KYC_REQUIRED", message: "The merchant must verify your identity first" };
/** Underwriting's LIVE_KYC_POLICY_REQUIRED, known before any draw: a live program whose merchant requires no KYC lends to nobody. */
const LIVE_KYC_POLICY_REQUIRED = { code: "LIVE_KYC_POLICY_REQUIRED", message: "This merchant cannot lend here yet" };

/** Whether underwriting declines every draw of the program (a live one whose tenant requires no KYC: shared/domain/underwriting.ts). */
const declinesEveryDraw = (program: ProgramContext, policy: { requireKycVerified: boolean }) =>
  embedKeyMode(program.program.embedKey) === "live" && !policy.requireKycVerified && !program.tenant.requiresKycBeforeFunding;

/**
 * Whether the wallet may draw now, judged by the rules that do not depend on
 * the amount (the amount ones run at accept): a blocked wallet, the
 * borrower's open loans against `maxOpenLoansPerBorrower`, and KYC still to
 * be confirmed by the merchant (eligible once it is). Only a caller with a
 * wallet session for the wallet gets the whole answer. Anyone else gets a
 * block (WALLET_BLOCKED: the merchant's policy about the address, which is
 * what DECISIONS.md's eligibility answers; not the wallet's history),
 * KYC_REQUIRED as bootstrap's `requiresKyc` says it (the line's own, which
 * turns off once the merchant confirms KYC: credit-lines.ts), and nothing
 * about the wallet's open loans (issue 10: no wallet's outstanding balance
 * to anyone who types its address). Either caller learns that a live
 * program whose merchant requires no KYC declines every draw
 * (LIVE_KYC_POLICY_REQUIRED), before the borrower signs anything.
 * Underwriting and accept apply every rule regardless.
 */
export async function checkEligibility(
  { db }: Pick<VerbDeps, "db">,
  { program, walletAddress, now, walletSession }: { program: ProgramContext; walletAddress: string; now: Date; walletSession: boolean },
) {
  const wallet = walletFor(program.chain, walletAddress);
  const line = await creditLineFor({ db }, { program, wallet, now });
  if (!walletSession) {
    const [policy, kycNeeded] = await Promise.all([currentPolicy(db, program.tenant.id), requiresKyc({ db }, { program, line })]);
    const reasons = [
      ...(policy.blockedWallets.includes(wallet) ? [WALLET_BLOCKED] : []),
      ...(kycNeeded ? [KYC_REQUIRED] : []),
      ...(declinesEveryDraw(program, policy) ? [LIVE_KYC_POLICY_REQUIRED] : []),
    ];
    return { walletAddress: wallet, eligible: reasons.length === 0, reasons };
  }
  const [policy, kycNeeded, [open], [borrower]] = await Promise.all([
    currentPolicy(db, program.tenant.id),
    requiresKyc({ db }, { program, line }),
    // The program's mode only, as underwriting counts them; through the borrower's own loans (by its ref's id).
    openLoansOfBorrowerQuery(db, {
      tenantId: program.tenant.id,
      borrowerId: borrowerIdOfRef(program.tenant.id, line.borrowerRef),
      mode: embedKeyMode(program.program.embedKey),
    }),
    db
      .select({ kycStatus: borrowers.kycStatus })
      .from(borrowers)
      .where(and(eq(borrowers.tenantId, program.tenant.id), eq(borrowers.borrowerRef, line.borrowerRef))),
  ]);
  const reasons: { code: string; message: string }[] = [];
  if (policy.blockedWallets.includes(wallet)) reasons.push(WALLET_BLOCKED);
  if (policy.maxOpenLoansPerBorrower !== null && Number(open?.n ?? 0) >= policy.maxOpenLoansPerBorrower) {
    reasons.push({ code: "MAX_OPEN_LOANS", message: `At most ${policy.maxOpenLoansPerBorrower} open loans at a time` });
  }
  if (kycNeeded) reasons.push(KYC_REQUIRED);
  else if (policy.requireKycVerified && borrower?.kycStatus !== "VERIFIED") {
    reasons.push({ code: "KYC_NOT_VERIFIED", message: "Identity verification is not complete" });
  }
  if (declinesEveryDraw(program, policy)) reasons.push(LIVE_KYC_POLICY_REQUIRED);
  return { walletAddress: wallet, eligible: reasons.length === 0, reasons };
}
