import { retryTransient } from "../http/transient-errors.ts";
import { unwrapLoanResult, type LoanCommand, type LoanCommandResult, type LoanWriter } from "./loan-commands.ts";
import type { LoanObject } from "./loan-object.ts";

/**
 * Commands that are safe to run again after a reset that may have come after
 * their commit: each re-reads the loan and does only what is still to do
 * (processing, a sweep, a repayment recognized by its transaction).
 */
const IDEMPOTENT: ReadonlySet<LoanCommand["kind"]> = new Set(["process", "sweep", "repayment", "repaymentFailed", "repaymentReversed"]);

/**
 * The LoanWriter over the LoanObject namespace: the loan's object is one of
 * its tenant's (`loanObjectName`). Kept apart from the class so that importing it pulls in no
 * `cloudflare:workers` (the cron worker and tests use this file). An
 * idempotent command whose object reset (or D1 failed under it) runs once
 * more; any other such failure reaches the caller (503 at the API).
 */
export function durableLoanWriter(namespace: DurableObjectNamespace<LoanObject>): LoanWriter {
  const call = async (cmd: LoanCommand) => (await namespace.get(namespace.idFromName(loanObjectName(cmd))).run(cmd)) as LoanCommandResult;
  return {
    run: async (cmd) => unwrapLoanResult(IDEMPOTENT.has(cmd.kind) ? await retryTransient(() => call(cmd)) : await call(cmd)),
  };
}

/** Loan objects per tenant. */
export const LOAN_SHARDS = 16;

/**
 * The name of the loan object that runs a loan's commands: one of its
 * tenant's `LOAN_SHARDS` objects, chosen by a hash (FNV-1a) of the loan id,
 * so every command of a loan, from every worker, reaches the same object,
 * which runs them one at a time (loan-object.ts); other loans' commands in
 * the same object run alongside.
 *
 * Why not one object per loan (until issue 16): each new loan then paid for
 * creating an object, with its storage, on its first command. Locally that
 * was a fifth of a loan's CPU (a new object cost 3–6 ms against 0.6 ms for
 * a warm one), and a loan object keeps nothing in storage: the loan's row
 * and its write token in D1 are its state, and a change commits only
 * against the token it read (README "One writer per loan"). A tenant's
 * objects stay warm; a reset of one touches only its tenant's loans, and
 * an idempotent command it cut off runs again. Changing `LOAN_SHARDS` (or
 * this naming) is safe for the same reason: while old and new names
 * overlap, two objects may run a loan's commands, and the write token lets
 * only one of two concurrent changes commit.
 */
export function loanObjectName(cmd: { tenantId: string; loanId: string }): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < cmd.loanId.length; i++) h = Math.imul(h ^ cmd.loanId.charCodeAt(i), 0x01000193);
  return `loans:${cmd.tenantId}:${(h >>> 0) % LOAN_SHARDS}`;
}
