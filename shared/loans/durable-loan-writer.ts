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
 * The LoanWriter over the LoanObject namespace: the object named after the
 * loan id. Kept apart from the class so that importing it pulls in no
 * `cloudflare:workers` (the cron worker and tests use this file). An
 * idempotent command whose object reset (or D1 failed under it) runs once
 * more; any other such failure reaches the caller (503 at the API).
 */
export function durableLoanWriter(namespace: DurableObjectNamespace<LoanObject>): LoanWriter {
  const call = async (cmd: LoanCommand) => (await namespace.get(namespace.idFromName(cmd.loanId)).run(cmd)) as LoanCommandResult;
  return {
    run: async (cmd) => unwrapLoanResult(IDEMPOTENT.has(cmd.kind) ? await retryTransient(() => call(cmd)) : await call(cmd)),
  };
}
