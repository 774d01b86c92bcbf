import type { LoanRow } from "../../db/schema/loans.ts";
import { recordLoanAgreement } from "../agreements/loan-agreements.ts";
import type { AgreementChallenge } from "../agreements/challenge-store.ts";
import type { TonSignDataFields } from "../agreements/verify-wallet-signature.ts";
import { DomainError, type ErrorKind } from "../domain/errors.ts";
import { modeOfChain } from "../domain/rails.ts";
import type { RoundTrips } from "../observability/round-trips.ts";
import type { Observation } from "../settlement/classify-transaction.ts";
import { applyRepayment, applyRepaymentFailure, type Attribution } from "../settlement/apply-repayment.ts";
import { type OrphanedPayment, reverseRepayment } from "../settlement/reverse-repayment.ts";
import { sweepLoan } from "../sweeps/sweep-loans.ts";
import { loadTenant, tenantClock } from "../tenants/tenant-context.ts";
import { fundLoan } from "./fund-loan.ts";
import { recordKycConfirmation, type KycConfirmationInput } from "./kyc-confirmation.ts";
import type { LoanContext } from "./loan-context.ts";
import { loadLoan } from "./load-loan.ts";
import { type CreatedLoan, processLoan } from "./process-loan.ts";
import { type LoanFacts, loanFacts } from "./processing-reads.ts";
import { reviewLoan, type ReviewInput } from "./review-loan.ts";

/** Every change of a loan, as a message its single writer executes. */
export type LoanCommand =
  /**
   * `facts`: the creator's (processing then reads in one round trip).
   * `created`: the loan as its creation committed it (decided and reserved in
   * its insert's batch), with its tenant's clock offset; processing funds it
   * from there without reading (process-loan.ts).
   */
  | { kind: "process"; tenantId: string; loanId: string; facts?: LoanFacts; created?: CreatedLoan }
  | ({ kind: "review" } & ReviewInput)
  | ({ kind: "kycConfirmation"; tenantId: string; loanId: string } & KycConfirmationInput)
  | {
      kind: "agreement";
      tenantId: string;
      loanId: string;
      challenge: AgreementChallenge;
      walletSignature: string;
      /** TON Connect signData: what the signature covers besides the message. */
      ton?: Partial<TonSignDataFields> | null;
      agreementText: string | null;
    }
  | { kind: "sweep"; tenantId: string; loanId: string }
  /** A confirmed payment the settlement listener found (or an Owner/Admin attributed). */
  | { kind: "repayment"; tenantId: string; loanId: string; payment: Observation; attribution?: Attribution }
  /** A repayment transaction that failed on-chain. */
  | { kind: "repaymentFailed"; tenantId: string; loanId: string; payment: Observation }
  /** A credited live repayment whose block a reorg orphaned (shared/settlement/evm-listener.ts). */
  | { kind: "repaymentReversed"; tenantId: string; loanId: string; payment: OrphanedPayment };

/**
 * Results cross the Durable Object boundary as values: errors keep their
 * kind. `roundTrips`: the command's D1 round trips and Durable Object calls,
 * when the bench counts them (shared/observability/round-trips.ts).
 */
export type LoanCommandResult = ({ ok: true; loan: LoanRow } | { ok: false; error: { kind: ErrorKind; detail: string | string[] } }) & {
  roundTrips?: RoundTrips;
};

async function execute(deps: LoanContext, cmd: LoanCommand): Promise<LoanRow> {
  switch (cmd.kind) {
    case "process":
      return processLoan(deps, cmd);
    case "review":
      return reviewLoan(deps, cmd);
    case "sweep":
      return sweepLoan(deps, cmd);
    case "repayment":
    case "repaymentFailed": {
      const tenant = await loadTenant(deps.db, cmd.tenantId);
      const now = tenantClock(deps.clock, tenant, modeOfChain(cmd.payment.chain)).now();
      const input = { tenant, loanId: cmd.loanId, payment: cmd.payment, now };
      return cmd.kind === "repayment"
        ? (await applyRepayment(deps, { ...input, attribution: cmd.attribution })).loan
        : (await applyRepaymentFailure(deps, input)).loan;
    }
    case "repaymentReversed": {
      const tenant = await loadTenant(deps.db, cmd.tenantId);
      const now = tenantClock(deps.clock, tenant, modeOfChain(cmd.payment.chain)).now();
      return reverseRepayment(deps, { tenantId: cmd.tenantId, loanId: cmd.loanId, payment: cmd.payment, now });
    }
    case "kycConfirmation":
    case "agreement": {
      const tenant = await loadTenant(deps.db, cmd.tenantId);
      const loan = await loadLoan(deps.db, cmd.tenantId, cmd.loanId);
      const now = tenantClock(deps.clock, tenant, loan.mode).now();
      const recorded =
        cmd.kind === "agreement"
          ? await recordLoanAgreement(deps, {
              loan,
              challenge: cmd.challenge,
              walletSignature: cmd.walletSignature,
              ton: cmd.ton,
              agreementText: cmd.agreementText,
              now,
            })
          : (await recordKycConfirmation(deps, { loan, verified: cmd.verified, merchantUserId: cmd.merchantUserId, reference: cmd.reference, now })).loan;
      return fundLoan(deps, { loan: recorded, tenant, now });
    }
  }
}

export async function executeLoanCommand(deps: LoanContext, cmd: LoanCommand): Promise<LoanCommandResult> {
  try {
    return { ok: true, loan: await execute(deps, cmd) };
  } catch (err) {
    if (err instanceof DomainError) return { ok: false, error: { kind: err.kind, detail: err.detail } };
    throw err;
  }
}

export const unwrapLoanResult = (result: LoanCommandResult): LoanRow => {
  if (!result.ok) throw new DomainError(result.error.kind, result.error.detail);
  return result.loan;
};

/**
 * The single writer of each loan: commands for one loan run one at a time.
 * Workers use the LoanObject Durable Object; the Bun tier an in-process lock.
 */
export interface LoanWriter {
  run(cmd: LoanCommand): Promise<LoanRow>;
}

/**
 * Moves a loan that `createLoan` just returned as far as it goes now, in
 * its writer: one this request created goes as committed (decided and
 * reserved: funding reads nothing), one its key found is processed from
 * fresh reads. Another request moving the loan at the same moment (409):
 * the loan as it is now.
 */
export async function processCreatedLoan(
  { db, writer }: { db: LoanContext["db"]; writer: LoanWriter },
  { tenant, loan, created }: { tenant: { id: string; clockOffsetMs: number }; loan: LoanRow; created: boolean },
): Promise<LoanRow> {
  try {
    const fresh = created ? { loan, clockOffsetMs: tenant.clockOffsetMs } : undefined;
    return await writer.run({ kind: "process", tenantId: tenant.id, loanId: loan.id, facts: loanFacts(loan), created: fresh });
  } catch (err) {
    if (!(err instanceof DomainError && err.kind === "CONFLICT")) throw err;
    return loadLoan(db, tenant.id, loan.id);
  }
}

/** Runs `fn` after every earlier call with the same key has settled. */
export function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

export function inProcessLoanWriter(deps: LoanContext): LoanWriter {
  const withLock = keyedMutex();
  return { run: async (cmd) => unwrapLoanResult(await withLock(cmd.loanId, () => executeLoanCommand(deps, cmd))) };
}
