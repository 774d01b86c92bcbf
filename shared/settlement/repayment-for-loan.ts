import type { Db } from "../../db/create-db.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { CHAIN_CONFIG } from "../chains/chain-config.ts";
import { effectiveChainConfig, type LiveChains } from "../chains/live/live-config.ts";
import { repaymentInstructions, type RepaymentInstructions, type UnsupportedRepayment } from "../chains/repayment-instructions.ts";
import { conflict } from "../domain/errors.ts";
import { amountsAt } from "../loans/loan-view.ts";
import { collectionsWalletOf } from "./collections-wallets.ts";

/** What instructions are built from: the database (the tenant's COLLECTIONS wallet) and this deployment's live chains. */
export type RepaymentDeps = { db: Db; liveChains?: LiveChains };

/**
 * What the borrower signs or sends to repay the loan now (DECISIONS.md
 * "Repayment"): for ACTIVE and DEFAULTED loans only (409 otherwise), for the
 * amount due at `now` on the tenant's clock (late fees included, partial
 * payments deducted), so instructions are fetched at payment time. A live
 * EVM loan repays through the deployment's pool into the tenant's verified
 * COLLECTIONS wallet of the loan's chain; without one (or without a pool) the
 * answer is `{ supported: false, chain, reason }`.
 */
export async function repaymentFor(deps: RepaymentDeps, loan: LoanRow, now: Date): Promise<RepaymentInstructions | UnsupportedRepayment> {
  if (loan.status !== "ACTIVE" && loan.status !== "DEFAULTED") {
    throw conflict(`Only ACTIVE or DEFAULTED loans can be repaid; this loan is ${loan.status}`);
  }
  const { remaining } = amountsAt(loan, now);
  if (remaining <= 0n) throw conflict("Nothing is due on this loan");
  const live = !CHAIN_CONFIG[loan.chain].simulated;
  return repaymentInstructions({
    loanId: loan.id,
    chain: loan.chain,
    totalDue: remaining,
    config: effectiveChainConfig(loan.chain, deps.liveChains ?? {}),
    collections: live ? await collectionsWalletOf(deps.db, loan.tenantId, loan.chain) : null,
  });
}
