import { unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { newId } from "../domain/ids.ts";
import type { Observation } from "./classify-transaction.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Keeps a payment the listener could not apply. One row per (chain, tx,
 * log): seeing the payment again changes nothing. `paidAt` is when the
 * payment was made (its block's time, on the tenant's clock of the chain's
 * mode), which an attribution judges it at; `createdAt`, when it was kept.
 */
export async function recordUnmatched(
  { db }: Pick<VerbDeps, "db">,
  { payment, reason, tenantId, now, settles = true }: { payment: Observation; reason: string; tenantId: string | null; now: Date; settles?: boolean },
) {
  await db
    .insert(unmatchedPayments)
    .values({
      id: newId(),
      tenantId,
      chain: payment.chain,
      txHash: payment.txHash,
      logIndex: payment.logIndex,
      blockNumber: payment.blockNumber,
      fromAddress: payment.from,
      toAddress: payment.to,
      token: payment.token,
      amount: payment.amount,
      comment: payment.comment,
      claimedLoanId: payment.loanId,
      reason,
      settles,
      paidAt: new Date(payment.timestamp * 1000),
      createdAt: now,
    })
    .onConflictDoNothing();
}
