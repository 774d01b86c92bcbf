import { and, eq, inArray, isNull, notInArray } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { unmatchedPayments } from "../../db/schema/settlement-tracking.ts";
import { conflict, DomainError, notFound, validationError } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import { SANDBOX_CHAINS, type TenantMode } from "../domain/rails.ts";
import { loadLoan } from "../loans/load-loan.ts";
import type { VerbDeps } from "../verbs.ts";
import type { Observation } from "./classify-transaction.ts";

export type UnmatchedRow = typeof unmatchedPayments.$inferSelect;

/** The tenant's unmatched payments, newest first; `open` leaves out attributed ones. */
/**
 * The tenant's kept payments, newest first; with `mode`, only those on that
 * mode's chains (a payment's mode is its chain's: no column needed).
 */
export async function listUnmatched(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode?: TenantMode; open?: boolean; limit: number; cursor?: string },
) {
  const page = newestFirst(unmatchedPayments, input.cursor);
  const rows = await db
    .select()
    .from(unmatchedPayments)
    .where(
      and(
        eq(unmatchedPayments.tenantId, input.tenantId),
        input.mode === undefined
          ? undefined
          : input.mode === "sandbox"
            ? inArray(unmatchedPayments.chain, [...SANDBOX_CHAINS])
            : notInArray(unmatchedPayments.chain, [...SANDBOX_CHAINS]),
        input.open ? isNull(unmatchedPayments.attributedLoanId) : undefined,
        page.where,
      ),
    )
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}

/**
 * An Owner/Admin attributes a kept payment to one of the tenant's loans on
 * the same chain: it is applied as that loan's repayment (full, partial or
 * with surplus) through the loan's writer, judged at the time the payment
 * was made (`paidAt`, see applyRepayment), and claimed in the same batch as
 * the loan's credit (see applyRepayment). Twice, or concurrently to two
 * loans: one wins, the other gets 409 and nothing moves.
 */
export async function attributeUnmatched({ db, writer }: Pick<VerbDeps, "db" | "writer">, input: { tenantId: string; id: string; loanId: string; by: string }) {
  if (!isUuid(input.id)) throw notFound("Unmatched payment");
  const [row] = await db
    .select()
    .from(unmatchedPayments)
    .where(and(eq(unmatchedPayments.id, input.id), eq(unmatchedPayments.tenantId, input.tenantId)))
    .limit(1);
  if (!row) throw notFound("Unmatched payment");
  if (row.attributedLoanId) throw conflict("This payment was already attributed");
  if (!row.settles)
    throw conflict(
      `This payment moved no ${row.chain === "TON" || row.chain === "TON_TESTNET" ? "USDT" : "stablecoin"} (${row.reason}): it cannot repay a loan`,
    );
  const loan = await loadLoan(db, input.tenantId, input.loanId);
  if (loan.chain !== row.chain) throw validationError([`loanId: the loan is on ${loan.chain}; the payment was on ${row.chain}`]);
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") throw conflict(`The loan is ${loan.status}; only ACTIVE or DEFAULTED loans take a repayment`);
  const payment: Observation = {
    kind: "payment",
    chain: row.chain,
    txHash: row.txHash,
    logIndex: row.logIndex,
    blockNumber: row.blockNumber,
    // When the payment was made (its block's time, on the tenant's clock), not when it was kept: it is judged then.
    timestamp: Math.floor(row.paidAt.getTime() / 1000),
    from: row.fromAddress,
    to: row.toAddress,
    token: row.token,
    amount: row.amount,
    loanId: loan.id,
    comment: row.comment,
    sandboxTenantId: null,
  };
  // This request's own claim: of concurrent attributions to the same loan, the others reach the writer after the
  // winner's credit, which makes theirs a duplicate the writer passes over; only the claim's own token tells them apart.
  const claim = crypto.randomUUID();
  let after;
  try {
    after = await writer.run({
      kind: "repayment",
      tenantId: input.tenantId,
      loanId: loan.id,
      payment,
      attribution: { unmatchedId: row.id, by: input.by, claim },
    });
  } catch (err) {
    // Lost the claim to a concurrent attribution (to another loan, in another writer): nothing was written.
    if (err instanceof DomainError && err.kind === "CONFLICT" && (await attributedLoanOf(db, row.id))) throw conflict("This payment was already attributed");
    throw err;
  }
  const [updated] = await db.select().from(unmatchedPayments).where(eq(unmatchedPayments.id, row.id));
  if (updated?.attributionClaim !== claim) {
    if (updated?.attributedLoanId) throw conflict("This payment was already attributed");
    throw conflict("The payment could not be attributed; the loan changed meanwhile");
  }
  return { unmatched: updated, loan: after };
}

async function attributedLoanOf(db: Db, id: string): Promise<string | null> {
  const [row] = await db.select({ loanId: unmatchedPayments.attributedLoanId }).from(unmatchedPayments).where(eq(unmatchedPayments.id, id));
  return row?.loanId ?? null;
}
