import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { displayAmount } from "../domain/money.ts";
import { commitTransition } from "../loans/commit-transition.ts";
import { loadLoan } from "../loans/load-loan.ts";
import type { VerbDeps } from "../verbs.ts";

/** Which credited payment a reorg orphaned: its transaction and log, as the settlement rows name them. */
export type OrphanedPayment = { chain: LoanRow["chain"]; txHash: string; logIndex: number; blockNumber: number };

/**
 * Un-credits a repayment whose block a live chain's reorg orphaned, in the
 * loan's writer, atomically with its event (`loan.repayment_reversed`): its
 * CONFIRMED settlement rows (repayment, partial, surplus) become REVERSED,
 * `paid` and `surplus` drop by what they added, a sandbox pool gives back
 * what it took (a live repayment never went into the live pool, whose
 * `available` mirrors the DISBURSEMENT wallet), and a REPAID loan goes back to DEFAULTED (if it had defaulted) or
 * ACTIVE, `repaidAt` cleared. Nothing to reverse (already
 * reversed, never credited): the loan as it is, no event. The listener
 * re-reads the blocks afterwards, so a payment the winning chain also has is
 * credited again.
 */
/**
 * The loan's confirmed credits of one payment (its settlements of the
 * transaction and log), through the loan's own settlements: the chain is
 * compared as `+chain`, so the (chain, block) index, whose range is every
 * settlement of the chain across tenants, is never the one read.
 */
export function orphanedCreditsQuery(db: Db, q: { tenantId: string; loanId: string; payment: Pick<OrphanedPayment, "chain" | "txHash" | "logIndex"> }) {
  return db
    .select({ id: settlements.id, kind: settlements.kind, amount: settlements.amount })
    .from(settlements)
    .where(
      and(
        eq(settlements.tenantId, q.tenantId),
        eq(settlements.loanId, q.loanId),
        equalsTerm(settlements.chain, q.payment.chain, true),
        eq(settlements.txHash, q.payment.txHash),
        eq(settlements.logIndex, q.payment.logIndex),
        eq(settlements.status, "CONFIRMED"),
        inArray(settlements.kind, ["REPAYMENT", "PARTIAL_REPAYMENT", "SURPLUS"]),
      ),
    );
}

export async function reverseRepayment(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; loanId: string; payment: OrphanedPayment; now: Date },
): Promise<LoanRow> {
  const loan = await loadLoan(db, input.tenantId, input.loanId);
  const rows = await orphanedCreditsQuery(db, { tenantId: loan.tenantId, loanId: loan.id, payment: input.payment });
  if (rows.length === 0) return loan;
  const applied = rows.filter((r) => r.kind !== "SURPLUS").reduce((sum, r) => sum + r.amount, 0n);
  const surplus = rows.filter((r) => r.kind === "SURPLUS").reduce((sum, r) => sum + r.amount, 0n);
  return commitTransition(db, {
    loan,
    trigger: { kind: "REPAYMENT_REVERSED", back: loan.defaultedAt ? "DEFAULTED" : "ACTIVE" },
    now: input.now,
    set: {
      paid: loan.paid - applied,
      surplus: loan.surplus - surplus,
      // Whichever payment had made it REPAID, without this one the loan is no longer paid off.
      ...(loan.status === "REPAID" ? { repaidAt: null } : {}),
    },
    eventData: {
      reversed: {
        chain: input.payment.chain,
        txHash: input.payment.txHash,
        logIndex: input.payment.logIndex,
        blockNumber: input.payment.blockNumber,
        // A decimal string in stablecoin units, as every amount in JSON (it read "102000000" for 102.00).
        amount: displayAmount(applied + surplus),
      },
    },
    statements: (guard) => [
      db
        .update(settlements)
        .set({ status: "REVERSED" })
        .where(
          and(
            inArray(
              settlements.id,
              rows.map((r) => r.id),
            ),
            guard,
          ),
        ),
      // Only a sandbox pool took the payment in (apply-repayment.ts); never below zero, which the pool's CHECK refuses,
      // and a refused batch would hold back the chain's listener for every tenant.
      ...(loan.poolId && loan.mode === "sandbox"
        ? [
            db
              .update(liquidityPools)
              .set({ available: sql`MAX(${liquidityPools.available} - ${Number(applied)}, 0)` as unknown as bigint, updatedAt: input.now })
              .where(and(eq(liquidityPools.id, loan.poolId), guard)),
          ]
        : []),
    ],
  });
}
