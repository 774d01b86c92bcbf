import { eq } from "drizzle-orm";
import { type AgreementTerms, termsChanged, termsOf } from "../domain/agreement-terms.ts";
import { merchantName } from "../domain/plain-text.ts";
import type { Db } from "../../db/create-db.ts";
import { creditLines } from "../../db/schema/credit-lines.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { agreementMessage } from "../agreements/loan-agreements.ts";
import { CHALLENGE_TTL_MS, type AgreementChallenge } from "../agreements/challenge-store.ts";
import { agreementRecord } from "../agreements/agreement-record.ts";
import { widgetDrawDomains } from "../agreements/ton-connect-domains.ts";
import { CHALLENGE_USED, isChallengeUsed, verifyAndConsumeChallenge } from "../agreements/verify-and-consume-challenge.ts";
import { conflict, validationError } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { amountError, formatAmount, parseAmount, TICKET_CAP_UNITS } from "../domain/money.ts";
import { dailyLateFeeUnits, dueAtFor, processingFeeUnits } from "../domain/pricing.ts";
import { createLoan, findLoanByKey, idempotencyScopeOf } from "../loans/create-loan.ts";
import { notTheTenantsOwn, ownWalletsQuery } from "../loans/own-wallets.ts";
import { type DeployedContracts, notAPayee } from "../chains/chain-config.ts";
import { deployedContracts, type LiveChains } from "../chains/live/live-config.ts";
import { isLiveWalletChain } from "../domain/wallets.ts";
import { processCreatedLoan } from "../loans/loan-commands.ts";
import { clockOffsetFor } from "../tenants/tenant-context.ts";
import { creditLimitOf, creditLineFor, creditLineView, requiresKyc, walletFor, type CreditLineRow } from "./credit-lines.ts";
import type { ProgramContext } from "./program-context.ts";
import { verifyWalletProof, type WalletProofDeps } from "./wallet-proof.ts";
import type { VerbDeps } from "../verbs.ts";

import { CHANNELS } from "../../db/schema/loan-vocabularies.ts";

export { CHANNELS };

/** The deployment's live chains: their token and pool, which a draw must not pay (a key each caller must pass). */
type DeployedChainsDeps = { liveChains: LiveChains };
export type Channel = (typeof CHANNELS)[number];

/** The amount and tenure of a draw, within the program's product (400 naming the field). */
function checkDraw(program: ProgramContext, amount: string, tenureDays: number): bigint {
  const units = parseAmount(amount, 2);
  const errors: string[] = [];
  if (units === null || units <= 0n) errors.push(amountError("amount"));
  else if (units < program.product.minTicket || units > program.product.maxTicket || units > TICKET_CAP_UNITS) {
    errors.push(`amount: must be between ${formatAmount(program.product.minTicket)} and ${formatAmount(program.product.maxTicket)}`);
  }
  if (!program.product.tenures.includes(tenureDays)) errors.push(`tenureDays: must be one of ${program.product.tenures.join(", ")}`);
  if (errors.length > 0) throw validationError(errors);
  return units!;
}

/**
 * A wallet a draw may pay, else 400 naming `walletAddress`: as loan creation
 * refuses (create-loan.ts, which accept goes through), neither one of the
 * service's own addresses on the chain nor one of the tenant's own wallets
 * there. Only live chains have tenant wallets: a sandbox program reads none.
 */
async function checkPayee(db: Db, program: ProgramContext, wallet: string, deployed: DeployedContracts | null): Promise<void> {
  const own = isLiveWalletChain(program.chain) ? await ownWalletsQuery(db, { tenantId: program.tenant.id, chain: program.chain, address: wallet }) : [];
  const refused = notAPayee(program.chain, wallet, deployed) ?? notTheTenantsOwn(program.chain, own);
  if (refused) throw validationError([`walletAddress: ${refused}`]);
}

/**
 * The draw fits what the revolving line has available (its limit less the
 * principal of its open loans), else 400 naming `amount`. Checked at quote
 * and again at accept.
 */
async function withinLine(db: Db, program: ProgramContext, line: CreditLineRow, principal: bigint): Promise<void> {
  const { available } = await creditLineView({ db }, { program, line });
  if (principal > available)
    throw validationError([`amount: at most ${formatAmount(available)} is available on this credit line until its open loans are repaid`]);
}

/** A draw of `principal` on the program's product as it is now: its processing fee, and the terms its borrower signs. */
function drawPrice(program: ProgramContext, principal: bigint): { processingFee: bigint; terms: AgreementTerms } {
  const p = program.product;
  const processingFee = processingFeeUnits(principal, { type: p.processingFeeType, value: p.processingFeeValue });
  const dailyLateFee = dailyLateFeeUnits(principal, { type: p.lateFeeType, value: p.lateFeeValue });
  return { processingFee, terms: termsOf({ principal, processingFee, dailyLateFee, gracePeriodDays: p.gracePeriodDays }) };
}

/**
 * The price of a draw and its agreement challenge (DECISIONS.md "quote"): a
 * single-use challenge bound to wallet, tenant, program, amount, tenure,
 * chain and stablecoin, valid 5 minutes on the tenant's clock, whose human
 * message the wallet signs. Only a caller with a wallet session for the
 * wallet (`walletSession`) has the amount checked against what the line has
 * available: to anyone else, that would disclose the wallet's open
 * principal. Accept checks it in every case. A wallet a loan may not pay
 * is refused first (`checkPayee`).
 */
export async function quoteDraw(
  { db, challenges, liveChains }: Pick<VerbDeps, "db" | "challenges"> & DeployedChainsDeps,
  input: { program: ProgramContext; walletAddress: string; amount: string; tenureDays: number; now: Date; walletSession: boolean },
) {
  const { program } = input;
  const wallet = walletFor(program.chain, input.walletAddress);
  const principal = checkDraw(program, input.amount, input.tenureDays);
  // Before the line is made: no credit line for a wallet that may not draw.
  await checkPayee(db, program, wallet, deployedContracts(liveChains, program.chain));
  const line = await creditLineFor({ db }, { program, wallet, now: input.now });
  if (input.walletSession) await withinLine(db, program, line, principal);
  const { processingFee, terms } = drawPrice(program, principal);
  const base = {
    id: newId(),
    tenantId: program.tenant.id,
    loanId: null,
    programId: program.program.id,
    walletAddress: wallet,
    amount: formatAmount(principal),
    tenureDays: input.tenureDays,
    chain: program.chain,
    stablecoin: program.product.stablecoin,
    terms,
    expiresAt: input.now.getTime() + CHALLENGE_TTL_MS,
  };
  const challenge: AgreementChallenge = {
    ...base,
    message: agreementMessage(base, merchantName(program.settings.branding.companyName, program.tenant.name)),
    consumedAt: null,
  };
  await challenges.issue(challenge);
  return {
    amount: formatAmount(principal),
    tenureDays: input.tenureDays,
    processingFee: formatAmount(processingFee),
    totalDue: terms.totalDue,
    dueAt: dueAtFor(input.now, input.tenureDays).toISOString(),
    agreementChallenge: { id: challenge.id, message: challenge.message, expiresAt: new Date(challenge.expiresAt).toISOString() },
  };
}

export type AcceptInput = {
  walletAddress: string;
  amount: string;
  tenureDays: number;
  agreementChallengeId: string;
  walletSignature: string;
  channel: Channel;
  idempotencyKey?: string;
  /** TON Connect signData: the wallet's public key, the signature's timestamp and domain. */
  publicKey?: string;
  timestamp?: number;
  domain?: string;
};

/**
 * Accepts a draw (DECISIONS.md "accept"): the challenge must exist for this
 * program, be bound to exactly these values, unexpired and unused, and the
 * signature must be the wallet's over its message (on EVM, a smart-contract
 * wallet's too when `deps.chain` can call the chain); otherwise 400 and no loan.
 * The challenge is consumed by the first accept that verifies (of concurrent
 * accepts, one), before the credit line and KYC checks, so an accept refused
 * by those leaves it used (`verifyAndConsumeChallenge`). The loan is created
 * through the same path as `POST /v1/loans` (underwriting, idempotency,
 * funding, events) with the program and channel recorded, in the draw's own
 * idempotency key space (per program and wallet), and with its agreement
 * (the exact message, the signature, the TON Connect fields) committed in
 * the same batch. A retried accept with the same idempotency key and the
 * wallet's signature answers with the loan it made; one sent while the first
 * is still running waits for that loan (`retriedAccept`).
 */
export async function acceptDraw(
  deps: Pick<VerbDeps, "db" | "challenges" | "writer"> & WalletProofDeps & DeployedChainsDeps,
  { program, now, ...input }: AcceptInput & { program: ProgramContext; now: Date },
): Promise<{ loan: LoanRow; created: boolean }> {
  const wallet = walletFor(program.chain, input.walletAddress);
  const principal = checkDraw(program, input.amount, input.tenureDays);
  const challenge = await deps.challenges.get(input.agreementChallengeId);
  if (!challenge || challenge.tenantId !== program.tenant.id || challenge.programId !== program.program.id || challenge.loanId !== null) {
    throw validationError(["agreementChallengeId: no such challenge for this program"]);
  }
  const mismatch = [
    challenge.walletAddress !== wallet ? "walletAddress: is not the wallet the challenge was issued to" : null,
    challenge.amount !== formatAmount(parseAmount(input.amount, 2)!) ? "amount: is not the amount the challenge was issued for" : null,
    challenge.tenureDays !== input.tenureDays ? "tenureDays: is not the tenure the challenge was issued for" : null,
    challenge.chain !== program.chain || challenge.stablecoin !== program.product.stablecoin
      ? "agreementChallengeId: the program's rail changed since the quote"
      : null,
  ].filter((m): m is string => m !== null);
  if (mismatch.length > 0) throw validationError(mismatch);

  // The draw's own key space (per program and wallet): a widget call never finds, returns or
  // blocks a merchant's loan, or another wallet's, whatever key it sends.
  const scope = idempotencyScopeOf({ program: program.program, borrowerWalletAddress: wallet });
  const idempotencyKey = input.idempotencyKey ?? `accept:${challenge.id}`;
  const proof = { ...input, address: challenge.walletAddress, message: challenge.message };
  // What this accept records on the challenge it uses, so that a retry of it (same key space and key) is known as one.
  const usedFor = `${scope}\n${idempotencyKey}`;
  const retry = (used: AgreementChallenge | null) => retriedAccept(deps, { program, scope, idempotencyKey, usedFor, challenge: used, proof, now });
  // A retry of the accept that used it gets that accept's loan, whatever the price is now; only a client that sends its
  // own idempotencyKey retries: without one, a used challenge is 400, as DECISIONS.md says of every reuse.
  if (challenge.consumedAt !== null) {
    if (!input.idempotencyKey) throw validationError([CHALLENGE_USED]);
    return retry(challenge);
  }
  // A key that already made a loan (the client quoted again before retrying): that loan, with the wallet's signature
  // over this challenge, which stays unused.
  if (input.idempotencyKey && (await findLoanByKey(deps.db, program.tenant.id, scope, idempotencyKey))) return retry(challenge);
  if (now.getTime() >= challenge.expiresAt) throw validationError(["agreementChallengeId: the challenge has expired"]);
  // The price the borrower signed, or no loan: a fee the merchant changed since the quote means quoting again.
  const changed = challenge.terms ? termsChanged(challenge.terms, drawPrice(program, principal).terms) : null;
  if (changed) throw validationError([changed]);

  // Consumed as soon as the signature verifies, before the line and KYC checks: a refusal after this leaves it used.
  const ton = { publicKey: input.publicKey, timestamp: input.timestamp, domain: input.domain };
  let consumed: AgreementChallenge;
  try {
    consumed = await verifyAndConsumeChallenge(
      deps.challenges,
      { contracts: deps.chain },
      {
        challenge,
        walletSignature: input.walletSignature,
        ton,
        allowedDomains: widgetDrawDomains(program.program, deps.widgetHosts),
        now,
        realNow: new Date(now.getTime() - clockOffsetFor(program.tenant, program.mode)),
        usedFor,
      },
    );
  } catch (err) {
    // Another accept used it between our read and our use: perhaps this same accept, sent again while the first ran.
    if (isChallengeUsed(err) && input.idempotencyKey) return retry(await deps.challenges.get(challenge.id));
    throw err;
  }
  try {
    return await drawWithChallenge(deps, { program, now, input, wallet, idempotencyKey, consumed, ton });
  } catch (err) {
    // Refused (or failed) after the challenge was used: a retry of this accept is told at once, not left waiting for a loan.
    await deps.challenges.useFailed(challenge.id, now.getTime()).catch(() => undefined);
    throw err;
  }
}

/** How long a retry of an accept that is still running waits for that accept's loan. */
export const RETRY_WAIT_MS = 10_000;
const RETRY_POLL_MS = 200;

/**
 * An accept whose challenge is already used: a retry of an accept (same key
 * space and key) gets that accept's loan, and only with the wallet's own
 * signature. If that accept is still running (its loan not yet committed),
 * the retry waits for it, up to `RETRY_WAIT_MS`, unless it ended without a
 * loan. Any other use of a used challenge: 400, at once.
 */
async function retriedAccept(
  deps: Pick<VerbDeps, "db" | "challenges"> & WalletProofDeps,
  input: {
    program: ProgramContext;
    scope: string;
    idempotencyKey: string;
    usedFor: string;
    /** The used challenge as just read. */
    challenge: AgreementChallenge | null;
    proof: Parameters<typeof verifyWalletProof>[1]["proof"];
    now: Date;
  },
): Promise<{ loan: LoanRow; created: boolean }> {
  const used = () => validationError([CHALLENGE_USED]);
  const { challenge } = input;
  const loanOfKey = () => findLoanByKey(deps.db, input.program.tenant.id, input.scope, input.idempotencyKey);
  const earlier = await loanOfKey();
  const sameAccept = challenge?.consumedFor === input.usedFor && !challenge.useFailedAt;
  if (!earlier && !sameAccept) throw used();
  if ((await verifyWalletProof(deps, { program: input.program, proof: input.proof, now: input.now })) !== null) throw used();
  if (earlier) return { loan: earlier, created: false };
  for (const deadline = Date.now() + RETRY_WAIT_MS; Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, RETRY_POLL_MS));
    const loan = await loanOfKey();
    if (loan) return { loan, created: false };
    if (challenge && (await deps.challenges.get(challenge.id))?.useFailedAt) break;
  }
  throw used();
}

/** The draw once its challenge is used: the credit line, KYC, the loan and its processing. */
async function drawWithChallenge(
  deps: Pick<VerbDeps, "db" | "writer"> & DeployedChainsDeps,
  {
    program,
    now,
    input,
    wallet,
    idempotencyKey,
    consumed,
    ton,
  }: {
    program: ProgramContext;
    now: Date;
    input: Omit<AcceptInput, "program" | "now">;
    wallet: string;
    idempotencyKey: string;
    consumed: AgreementChallenge;
    ton: { publicKey?: string; timestamp?: number; domain?: string };
  },
): Promise<{ loan: LoanRow; created: boolean }> {
  const { db } = deps;
  const challenge = consumed;
  const line = await creditLineFor({ db }, { program, wallet, now });
  await withinLine(db, program, line, parseAmount(input.amount, 2)!);
  if (await requiresKyc({ db }, { program, line })) {
    throw conflict(`KYC is required first: the merchant confirms it with POST /v1/credit-lines/${line.id}/kyc-confirmation`);
  }

  const { loan, created } = await createLoan(
    { db },
    {
      tenant: program.tenant,
      loanProductId: program.product.id,
      borrowerRef: line.borrowerRef,
      borrowerWalletAddress: wallet,
      chain: program.chain,
      keyMode: program.mode,
      deployed: deployedContracts(deps.liveChains, program.chain),
      principalAmount: input.amount,
      tenureDays: input.tenureDays,
      idempotencyKey,
      program: { id: program.program.id, channel: input.channel, creditLimit: creditLimitOf(program) },
      // The draw's agreement, committed with the loan (no loan without it): the exact message, signature and TON fields.
      agreement: agreementRecord({ challenge: consumed, walletSignature: input.walletSignature, ton, now }),
      // Checked again against the product creation reads: a change that lands after the check above still makes no loan.
      agreedTerms: consumed.terms,
      now,
    },
  );
  if (!line.agreementAcceptedAt) {
    await db.update(creditLines).set({ agreementAcceptedAt: now, agreementChallengeId: challenge.id, updatedAt: now }).where(eq(creditLines.id, line.id));
  }
  return { loan: await processCreatedLoan({ db, writer: deps.writer }, { tenant: program.tenant, loan, created }), created };
}
