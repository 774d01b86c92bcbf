import { and, eq, isNull, ne, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { newId } from "../domain/ids.ts";
import { displayAmount } from "../domain/money.ts";
import { commitTransition } from "../loans/commit-transition.ts";
import { owedAt } from "../loans/loan-view.ts";
import { loadLoan } from "../loans/load-loan.ts";
import type { LoadedTenant } from "../tenants/tenant-context.ts";
import type { VerbDeps } from "../verbs.ts";
import type { Observation } from "./classify-transaction.ts";
import { sweepLoanAt } from "../sweeps/sweep-loans.ts";
import { recordUnmatched } from "./unmatched.ts";

export type RepaymentOutcome = "APPLIED" | "DUPLICATE" | "UNMATCHED";

/** Attribution of a kept unmatched payment by an Owner/Admin: marked in the same batch. */
/** An attribution of a kept payment: `claim` is the attributing request's own token, written with the claim, so it can tell its claim from a concurrent one's. */
export type Attribution = { unmatchedId: string; by: string; claim: string };

/** The loan's repayment rows as a new payment needs them: the payments settled before (by tx and log), and when each was made. */
const repaymentsOf = (db: Db, loan: LoanRow) =>
  db
    .select({ kind: settlements.kind, status: settlements.status, txHash: settlements.txHash, logIndex: settlements.logIndex, paidAt: settlements.paidAt })
    .from(settlements)
    .where(and(eq(settlements.tenantId, loan.tenantId), eq(settlements.loanId, loan.id), ne(settlements.kind, "FUNDING")));

type RepaymentRows = Awaited<ReturnType<typeof repaymentsOf>>;

/** The same payment (tx and log) settled before; a payment a reorg un-credited (REVERSED) is credited again when the chain that won has it. */
const settledBefore = (rows: RepaymentRows, payment: Observation) =>
  rows.some((r) => r.txHash === payment.txHash && r.logIndex === payment.logIndex && r.status !== "REVERSED");

/**
 * When a payment counts as made: its transfer's time on the loan's clock
 * (its block's time: live chains run on real time, and a sandbox ledger
 * stamps its blocks with the tenant's sandbox time of the write), never
 * before the loan was funded nor before a payment already credited to it.
 * The listener reads each ledger in block order, so for it this is the
 * transfer's time. An attribution can bring an older kept payment after newer
 * ones; it then counts from the newest, because until that one arrived the
 * loan was not paid off, and its late fees stand.
 */
function countsFrom(loan: LoanRow, paidAt: Date, rows: RepaymentRows): Date {
  const credited = rows.filter((r) => r.status === "CONFIRMED" && (r.kind === "REPAYMENT" || r.kind === "PARTIAL_REPAYMENT")).map((r) => r.paidAt.getTime());
  return new Date(Math.max(paidAt.getTime(), loan.fundedAt?.getTime() ?? 0, ...credited));
}

/** When the transfer was made: its block's time (unix seconds), on the loan's clock. */
const paidAtOf = (payment: Observation) => new Date(payment.timestamp * 1000);

const settlementRow = (
  loan: LoanRow,
  payment: Observation,
  kind: "REPAYMENT" | "PARTIAL_REPAYMENT" | "SURPLUS",
  status: "CONFIRMED" | "FAILED",
  amount: bigint,
  at: Date,
) => ({
  id: newId(),
  tenantId: loan.tenantId,
  loanId: loan.id,
  kind,
  status,
  amount,
  chain: payment.chain,
  mode: loan.mode,
  asset: loan.stablecoin,
  txHash: payment.txHash,
  fromAddress: payment.from,
  toAddress: payment.to,
  blockNumber: payment.blockNumber,
  logIndex: payment.logIndex,
  paidAt: paidAtOf(payment),
  createdAt: at,
});

/**
 * Applies a confirmed payment to its loan (issue 5, "Amounts"), in the loan's
 * writer: the total due at the time of the transfer (`countsFrom`) repays it
 * (REPAID, `repaidAt` that time, late fees as of then, `loan.repaid`); less
 * is a partial payment and the rest stays due; more repays it and keeps the
 * surplus as refundable. A payment after DEFAULTED recovers the loan to
 * REPAID. The time is the transfer's, whenever the listener or an attribution
 * gets to it: late-fee days a sweep recorded after it are not owed, and a
 * loan the sweep marked overdue or defaulted meanwhile keeps that history
 * (`loan.overdue`, `loan.defaulted`, `overdue`, `defaultedAt`) but is REPAID
 * with the late fee of the payment's time. A payment to a loan that is not
 * ACTIVE or DEFAULTED is kept as unmatched. The same payment (tx and log)
 * twice is applied once. The pool takes back what the loan owed.
 */
export async function applyRepayment(
  { db }: Pick<VerbDeps, "db">,
  input: { tenant: LoadedTenant; loanId: string; payment: Observation; now: Date; attribution?: Attribution },
): Promise<{ loan: LoanRow; outcome: RepaymentOutcome }> {
  const { payment, tenant } = input;
  const found = await loadLoan(db, tenant.id, input.loanId);
  const rows = await repaymentsOf(db, found);
  if (settledBefore(rows, payment)) return { loan: found, outcome: "DUPLICATE" };
  if (found.status !== "ACTIVE" && found.status !== "DEFAULTED") {
    if (!input.attribution)
      await recordUnmatched({ db }, { payment, reason: `the loan is ${found.status}, not awaiting repayment`, tenantId: tenant.id, now: input.now });
    return { loan: found, outcome: "UNMATCHED" };
  }
  const at = countsFrom(found, paidAtOf(payment), rows);
  // Unpaid until `at`: what the sweep would have recorded by then (overdue, DEFAULTED past the grace period) is
  // recorded first, as of `at`, so a payment made before any sweep ran is judged on the same states as one after.
  const loan = at.getTime() <= input.now.getTime() ? await sweepLoanAt(db, found, at) : found;
  const { remaining, lateDays } = owedAt(loan, at);
  const full = payment.amount >= remaining;
  const applied = full ? remaining : payment.amount;
  const surplus = full ? payment.amount - remaining : 0n;
  // An attribution claims the kept payment for this loan in the same batch, before the
  // loan's update, and the update holds only if this batch's claim did: of two
  // attributions of one payment to two loans (two writers, no lock in common),
  // exactly one credits its loan; the other writes nothing and gets 409.
  const claimToken = input.attribution?.claim ?? crypto.randomUUID();
  const claim = input.attribution
    ? {
        before: (loanUnchanged: SQL) => [
          db
            .update(unmatchedPayments)
            .set({ attributedLoanId: loan.id, attributedAt: input.now, attributedBy: input.attribution!.by, attributionClaim: claimToken })
            .where(and(eq(unmatchedPayments.id, input.attribution!.unmatchedId), isNull(unmatchedPayments.attributedLoanId), loanUnchanged)),
        ],
        condition: sql`EXISTS (SELECT 1 FROM ${unmatchedPayments} WHERE ${unmatchedPayments.id} = ${input.attribution.unmatchedId} AND ${unmatchedPayments.attributedLoanId} = ${loan.id} AND ${unmatchedPayments.attributionClaim} = ${claimToken})`,
      }
    : {};
  // A sandbox repayment goes back into the simulated pool that lent it. A live one goes to the tenant's COLLECTIONS
  // wallet, not the DISBURSEMENT wallet whose balance a live pool's `available` mirrors (live-pool.ts): it adds nothing.
  const poolBack = (guard: ReturnType<typeof sql>) =>
    loan.poolId && loan.mode === "sandbox"
      ? [
          db
            .update(liquidityPools)
            .set({ available: sql`${liquidityPools.available} + ${Number(applied)}` as unknown as bigint, updatedAt: input.now })
            .where(and(eq(liquidityPools.id, loan.poolId), guard)),
        ]
      : [];
  const next = await commitTransition(db, {
    loan,
    trigger: { kind: full ? "REPAYMENT_CONFIRMED" : "PARTIAL_REPAYMENT" },
    now: input.now,
    set: full ? { paid: loan.paid + applied, surplus: loan.surplus + surplus, repaidAt: at, lateFeeDays: lateDays } : { paid: loan.paid + applied },
    statements: (guard) => [
      insertIf(db, settlements, settlementRow(loan, payment, full ? "REPAYMENT" : "PARTIAL_REPAYMENT", "CONFIRMED", applied, input.now), guard),
      ...(surplus > 0n
        ? [insertIf(db, settlements, { ...settlementRow(loan, payment, "SURPLUS", "CONFIRMED", surplus, input.now), logIndex: payment.logIndex }, guard)]
        : []),
      ...poolBack(guard),
    ],
    ...claim,
  });
  return { loan: next, outcome: "APPLIED" };
}

/**
 * A repayment transaction that failed (reverted, or a transfer the sender
 * could not cover): a FAILED settlement and `loan.repayment_failed`, whose
 * `data.payment` names the transaction and the amount it tried to pay (a
 * merchant had only the loan to go on); the loan stays as it was. Once per
 * transaction.
 */
export async function applyRepaymentFailure({ db }: Pick<VerbDeps, "db">, input: { tenant: LoadedTenant; loanId: string; payment: Observation; now: Date }) {
  const loan = await loadLoan(db, input.tenant.id, input.loanId);
  if (settledBefore(await repaymentsOf(db, loan), input.payment)) return { loan, outcome: "DUPLICATE" as const };
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") return { loan, outcome: "UNMATCHED" as const };
  const next = await commitTransition(db, {
    loan,
    trigger: { kind: "REPAYMENT_FAILED" },
    now: input.now,
    eventData: {
      payment: {
        chain: input.payment.chain,
        txHash: input.payment.txHash,
        logIndex: input.payment.logIndex,
        blockNumber: input.payment.blockNumber,
        from: input.payment.from,
        amount: displayAmount(input.payment.amount),
      },
    },
    extraEvents: () => [],
    statements: (guard) => [insertIf(db, settlements, settlementRow(loan, input.payment, "REPAYMENT", "FAILED", input.payment.amount, input.now), guard)],
  });
  return { loan: next, outcome: "APPLIED" as const };
}
