import { unwrapLoanResult, type LoanCommandResult, type LoanWriter } from "./loan-commands.ts";
import type { LoanObject } from "./loan-object.ts";

/**
 * The LoanWriter over the LoanObject namespace: the object named after the
 * loan id. Kept apart from the class so that importing it pulls in no
 * `cloudflare:workers` (the cron worker and tests use this file).
 */
export function durableLoanWriter(namespace: DurableObjectNamespace<LoanObject>): LoanWriter {
  return {
    run: async (cmd) => unwrapLoanResult((await namespace.get(namespace.idFromName(cmd.loanId)).run(cmd)) as LoanCommandResult),
  };
}
