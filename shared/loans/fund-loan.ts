import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { placeholderRow, preparedStatement } from "../../db/prepared-statements.ts";
import { liquidityPools } from "../../db/schema/liquidity-pools.ts";
import { settlements } from "../../db/schema/loan-records.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { chainConfig } from "../chains/chain-config.ts";
import type { WalletBalances } from "../chains/chain-port.ts";
import { conflict } from "../domain/errors.ts";
import { newId } from "../domain/ids.ts";
import { displayAmount, formatAmount } from "../domain/money.ts";
import { dueAtFor } from "../domain/pricing.ts";
import { isSandboxChain } from "../domain/rails.ts";
import { loanEnvelope, preparedEventInsert } from "../events/loan-events.ts";
import { liveSender, mayStillSend, refreshLivePool } from "../liquidity/live-pool.ts";
import { hasHeadroom, headroomOf, poolFor, type PoolRow } from "../liquidity/pools.ts";
import type { LoadedTenant } from "../tenants/tenant-context.ts";
import { commitTransition, commitUpdate, type FollowUp } from "./commit-transition.ts";
import { fundingHold, holdFactsUnchanged, readForUnderwriting, type UnderwritingReads } from "./decide-loan.ts";
import type { LoanContext } from "./loan-context.ts";
import { loanCarries } from "./loan-guard.ts";

/**
 * Whole cents with 2 decimals, anything finer exactly with 6: a pool takes
 * back repayments to the unit (TON amounts have 6 decimals, and a live pool
 * is its wallet's balance), and formatting must never throw in the middle of
 * funding.
 */

const poolSummary = (pool: PoolRow, headroom: bigint) => ({
  id: pool.id,
  stablecoin: pool.stablecoin,
  available: displayAmount(pool.available),
  reserved: displayAmount(pool.reserved),
  headroom: displayAmount(headroom),
  lowThreshold: displayAmount(pool.lowThreshold),
});

/**
 * The statements of a reservation besides the reservation itself: the first
 * time headroom falls under the pool's threshold, mark the pool and record
 * `liquidity.low` once (the mark re-arms when liquidity is topped up).
 * Both only while the loan carries `next`'s token (the reservation's).
 */
function lowLiquidityAlert(db: Db, pool: PoolRow, loan: LoanRow, headroomAfter: bigint, now: Date, next: LoanRow) {
  const envelope = {
    id: newId(),
    type: "liquidity.low" as const,
    createdAt: now.toISOString(),
    // The loan's mode, which is its pool's (poolFor selects by it).
    mode: loan.mode,
    tenantId: loan.tenantId,
    data: { pool: poolSummary({ ...pool, reserved: pool.reserved + loan.principal }, headroomAfter), loanId: loan.id },
    // The loan whose reservation crossed the threshold: its program and channel, as its other events carry them.
    program: loan.programId,
    channel: loan.channel,
  };
  return [
    lowAlertMark(db, { eventId: envelope.id, poolId: pool.id, guardLoanId: next.id, guardToken: next.writeToken }),
    lowAlertEvent(db, envelope, null, { poolId: pool.id, eventId: envelope.id }),
  ];
}

/** The pool's mark of its `liquidity.low` (see lowLiquidityAlert), prepared (db/prepared-statements.ts). */
const lowAlertMark = preparedStatement<{ eventId: string; poolId: string; guardLoanId: string; guardToken: string }>((db, p) =>
  db
    .update(liquidityPools)
    .set({ lowAlertEventId: p("eventId") })
    .where(
      and(
        eq(liquidityPools.id, p("poolId")),
        isNull(liquidityPools.lowAlertEventId),
        sql`${liquidityPools.available} - ${liquidityPools.reserved} < ${liquidityPools.lowThreshold}`,
        loanCarries(p("guardLoanId"), p("guardToken")),
      ),
    ),
);

/** `liquidity.low`, written only if the pool's mark is this event's. */
const lowAlertEvent = preparedEventInsert<{ poolId: string; eventId: string }>(
  (p) => sql`EXISTS (SELECT 1 FROM ${liquidityPools} WHERE ${liquidityPools.id} = ${p("poolId")} AND ${liquidityPools.lowAlertEventId} = ${p("eventId")})`,
);

/** The pool's `reserved` grows by `amount` (base units), while the loan carries the reservation's token; prepared. */
const poolReserve = preparedStatement<{ amount: number; updatedAt: Date; poolId: string; guardLoanId: string; guardToken: string }>((db, p) =>
  db
    .update(liquidityPools)
    .set({ reserved: sql`${liquidityPools.reserved} + ${p("amount")}` as unknown as bigint, updatedAt: p("updatedAt") })
    .where(and(eq(liquidityPools.id, p("poolId")), loanCarries(p("guardLoanId"), p("guardToken")))),
);

/**
 * The reservation of the principal in the pool: the loan enters RESERVED with the pool's `reserved`, only with headroom,
 * with the next reservation number (live transfers name it, chain-port.ts `reservation`). Like every change of the loan
 * it holds only under the write token it was read with: of two runs that would reserve (and so choose a sender), one does.
 */
function reservation(db: Db, loan: LoanRow, pool: PoolRow, now: Date, fundingFrom: string | null = null): FollowUp {
  const headroomAfter = headroomOf(pool) - loan.principal;
  return {
    set: { fundingState: "RESERVED", poolId: pool.id, fundingFrom, fundingReservation: loan.fundingReservation + 1 },
    statements: (_guard, next) => [
      poolReserve(db, { amount: Number(loan.principal), updatedAt: now, poolId: pool.id, guardLoanId: next.id, guardToken: next.writeToken }),
      ...lowLiquidityAlert(db, pool, loan, headroomAfter, now, next),
    ],
    condition: hasHeadroom(pool.id, loan.principal),
  };
}

/**
 * Reserves the principal in the pool, atomically with the loan entering RESERVED (live: fixing its sender); null
 * without headroom, or when what the funding hold was judged on (`judged`) changed meanwhile.
 */
async function reserve(db: Db, loan: LoanRow, pool: PoolRow, now: Date, fundingFrom: string | null, judged: UnderwritingReads): Promise<LoanRow | null> {
  const { set, statements, condition } = reservation(db, loan, pool, now, fundingFrom);
  return commitUpdate(db, loan, set, now, statements, and(condition, holdFactsUnchanged(loan, judged)));
}

/** The loan waits for the loan-level KYC gate (confirmation and agreement) before any funding. */
const waitsForKyc = (loan: LoanRow): boolean => loan.requiresKycGate && (!loan.kycConfirmedAt || !loan.agreementId);

/**
 * The reservation to commit in the same batch as a loan's decision, when
 * funding would make it next (`fundLoan`'s first step): an APPROVED sandbox
 * loan with nothing reserved or waited for, and a pool (`pool`, read with
 * the loan). Without headroom only the decision commits and funding goes on
 * as it would (reporting the wait). Nor when its funding would be held on
 * what the decision read (`fundingHold`: a FAILED borrower under the KYC
 * setting, which the policy need not decline): then only the decision
 * commits, and funding records the hold (a review had a certified tenant's
 * sandbox draw of a FAILED borrower reserved here, and funded).
 */
export const reservationOnApproval =
  (db: Db, pool: PoolRow | null, now: Date, judged: UnderwritingReads) =>
  (decided: LoanRow): FollowUp | null => {
    if (!pool || decided.status !== "CREATED" || decided.decisionOutcome !== "APPROVED" || decided.fundingState !== "NONE") return null;
    if (decided.mode === "live" || waitsForKyc(decided)) return null;
    if (fundingHold(decided, judged).length > 0) return null;
    const reserved = reservation(db, decided, pool, now);
    // Only while what the decision read still holds (the borrower's KYC, the policy's version, the setting): else the
    // decision commits alone and funding judges its hold on fresh reads, as for any reservation (`reserve`).
    return { ...reserved, condition: and(reserved.condition, holdFactsUnchanged(decided, judged)) };
  };

/**
 * The loan waits for liquidity (or, live, for its sender's wallet, signer or
 * gas): AWAITING_LIQUIDITY, with `loan.funding_failed` and
 * `liquidity.unavailable` carrying `reason`, once per wait. A reservation the
 * loan held (a run that stopped before its transfer) is released with it, so
 * a waiting loan never holds headroom.
 */
async function reportNoLiquidity(db: Db, loan: LoanRow, pool: PoolRow | null, now: Date, why?: string): Promise<LoanRow> {
  if (loan.fundingState === "AWAITING_LIQUIDITY") return loan; // reported when it started waiting
  const reason = why ?? (pool ? "no liquidity pool has enough headroom for this principal" : "no liquidity pool for this stablecoin");
  const heldPool = loan.fundingState === "RESERVED" ? loan.poolId : null;
  return commitTransition(db, {
    loan,
    trigger: { kind: "FUNDING_FAILED" },
    now,
    set: { fundingState: "AWAITING_LIQUIDITY", poolId: null, fundingFrom: null },
    eventData: { reason },
    extraEvents: (next) => [
      loanEnvelope("liquidity.unavailable", next, now, {
        reason,
        requested: formatAmount(loan.principal),
        pool: pool ? poolSummary(pool, headroomOf(pool)) : null,
      }),
    ],
    statements: (guard) =>
      heldPool
        ? [
            db
              .update(liquidityPools)
              .set({ reserved: sql`${liquidityPools.reserved} - ${Number(loan.principal)}` as unknown as bigint, updatedAt: now })
              .where(and(eq(liquidityPools.id, heldPool), guard)),
          ]
        : [],
  });
}

/**
 * What a live loan is sent from, or the wait it reports instead (or `held`:
 * a reservation whose sender is unknown, left as it is). `followOnly`: the
 * sender may no longer send (deleted, unverified, no signer), so only a
 * transfer already in flight is followed, and none in flight is a failure
 * that releases the reservation.
 */
type LiveFunding = { ok: true; sender: string; pool: PoolRow | null; followOnly?: string } | { ok: false; waiting: LoanRow };

/**
 * The live gates before any reservation or broadcast (DECISIONS.md "Live
 * wallets"): a verified DISBURSEMENT wallet with an installed signer on the
 * loan's chain, balances the chain port can read, and enough native coin for
 * the transfer's fee (`minGasNative`). Then the tenant's live pool on that
 * chain with `available` refreshed from the wallet's stablecoin balance, for
 * the conditional reservation.
 *
 * A loan that already holds a reservation keeps the sender it reserved with
 * (`fundingFrom`) and passes no gate: its transfer may be in flight, and a
 * transfer is idempotent per sender only, so asking another wallet (one
 * whose signer was installed since, or after the sender was deleted) would
 * send the principal a second time. The sender's record answers for its
 * transaction; if the sender may no longer send (`mayStillSend`: deleted,
 * unverified, signer gone), it only follows one in flight (`followOnly`).
 * Only a transfer that failed without moving money, or none in flight for a
 * sender that may no longer send, releases the reservation, and the next run
 * chooses again. Either is the chain port's failure answered for the
 * reservation's number, after which no run still holding the reservation
 * (its loan object reset, or a second object after a LOAN_SHARDS change)
 * can send under it (chain-port.ts `reservation`).
 */
async function liveFunding(deps: LoanContext, loan: LoanRow, now: Date): Promise<LiveFunding> {
  const { db } = deps;
  if (loan.fundingState === "RESERVED") {
    // A reservation made before its sender was recorded (migration 0034, backfilled by 0036 where the tenant had one candidate wallet):
    // its transfer may be in flight from any wallet, so nothing is sent or released; the operator settles it (README "Live funding").
    if (!loan.fundingFrom) return { ok: false, waiting: loan };
    return { ok: true, sender: loan.fundingFrom, pool: null, followOnly: await whyNoNewAttempt(deps, loan, loan.fundingFrom) };
  }
  const wait = async (reason: string): Promise<LiveFunding> => ({ ok: false, waiting: await reportNoLiquidity(db, loan, null, now, reason) });
  const sender = await liveSender(db, loan.tenantId, loan.chain);
  if (!sender.ok) return wait(sender.reason);
  let balances: WalletBalances | null = null;
  try {
    balances = (await deps.chain.balances?.(loan.chain, sender.address)) ?? null;
  } catch {
    // The chain could not be asked (RPC down): wait; the retry job asks again.
  }
  if (!balances) return wait(`the balances of the DISBURSEMENT wallet ${sender.address} on ${loan.chain} cannot be read right now`);
  const minGas = chainConfig(loan.chain).minGasNative ?? 0n;
  if (balances.native < minGas) {
    return wait(
      `the DISBURSEMENT wallet ${sender.address} on ${loan.chain} cannot pay gas: it holds ${balances.native} native base units, funding needs at least ${minGas}`,
    );
  }
  const pool = await refreshLivePool(db, { tenantId: loan.tenantId, chain: loan.chain, balance: balances.stablecoin, now });
  return { ok: true, sender: sender.address, pool };
}

/**
 * Why the pinned sender of a RESERVED live loan must make no new attempt
 * (it may only follow a transfer in flight), or undefined: it may no longer
 * send (deleted, unverified, its signer gone), or it cannot pay gas. The
 * reason is what the loan waits with if nothing is in flight.
 */
async function whyNoNewAttempt(deps: LoanContext, loan: LoanRow, sender: string): Promise<string | undefined> {
  if (!(await mayStillSend(deps.db, loan.tenantId, loan.chain, sender))) {
    return `the DISBURSEMENT wallet ${sender} on ${loan.chain} that reserved this loan may no longer send (deleted, unverified, or its signer removed)`;
  }
  const minGas = chainConfig(loan.chain).minGasNative ?? 0n;
  let native: bigint | null = null;
  try {
    native = (await deps.chain.balances?.(loan.chain, sender))?.native ?? null;
  } catch {
    // Unreadable: the transfer itself says what it can.
  }
  if (native !== null && native < minGas) {
    return `the DISBURSEMENT wallet ${sender} on ${loan.chain} cannot pay gas: it holds ${native} native base units, funding needs at least ${minGas}`;
  }
  return undefined;
}

/**
 * Funding held: a decline rule fires now (decide-loan.ts `fundingHold`: the
 * borrower's KYC is not what the policy requires, the wallet was blocked, the
 * live KYC requirement was dropped since the approval). The decision stays as
 * recorded; the loan waits as HELD with `loan.funding_failed` naming the
 * reasons, once per hold, and is funded by a later retry once no rule fires.
 * Null when none fires.
 */
async function heldByRules(db: Db, loan: LoanRow, now: Date, reads: UnderwritingReads): Promise<LoanRow | null> {
  const reasons = fundingHold(loan, reads);
  if (reasons.length === 0) return null;
  if (loan.fundingState === "HELD") return loan; // reported when the hold began
  return commitTransition(db, {
    loan,
    trigger: { kind: "FUNDING_FAILED" },
    now,
    set: { fundingState: "HELD", poolId: null, fundingFrom: null },
    eventData: { reason: `funding is held: ${reasons.map((r) => r.message).join("; ")}`, reasons },
  });
}

/**
 * A confirmed funding's settlement row, written only if the loan then
 * carries the funding's write token; built once per database
 * (db/prepared-statements.ts).
 */
const settlementInsert = preparedStatement<typeof settlements.$inferInsert & { guardLoanId: string; guardToken: string }>((db, p) =>
  insertIf(db, settlements, placeholderRow(settlements, p), loanCarries(p("guardLoanId"), p("guardToken"))),
);

/**
 * Funds an approved loan (SPEC.md "CREATED → ACTIVE"): waits for the
 * loan-level KYC gate, reserves the principal, sends it on the loan's chain
 * (idempotent by the reference `funding:<loanId>`), then commits ACTIVE with
 * `fundedAt`, `dueAt`, `fundingTxHash`, the pool movement, the settlement row
 * and `loan.funded` together. Without headroom the loan stays CREATED,
 * waiting for liquidity, with `loan.funding_failed` and `liquidity.unavailable`
 * (once per wait). A loan is never funded twice: every step is conditional on
 * the state it read, and the chain send is keyed by the loan.
 */
export async function fundLoan(
  deps: LoanContext,
  { loan, tenant, now, pool: read, reads }: { loan: LoanRow; tenant: Pick<LoadedTenant, "id">; now: Date; pool?: PoolRow | null; reads?: UnderwritingReads },
): Promise<LoanRow> {
  const { db } = deps;
  if (loan.status !== "CREATED" || loan.decisionOutcome !== "APPROVED" || loan.fundingState === "FUNDED") return loan;
  if (waitsForKyc(loan)) {
    if (loan.fundingState === "WAITING_KYC") return loan;
    const waiting = await commitUpdate(db, loan, { fundingState: "WAITING_KYC" }, now);
    if (!waiting) throw conflict("The loan changed while it was being funded; retry");
    return waiting;
  }
  // Before anything is reserved: a decline rule that fires now (KYC failed, wallet blocked, the live KYC requirement
  // dropped since the approval) holds the funding. A RESERVED loan may have a transfer in flight: it goes on.
  let judged = reads;
  if (loan.fundingState !== "RESERVED") {
    judged ??= await readForUnderwriting(db, loan);
    const held = await heldByRules(db, loan, now, judged);
    if (held) return held;
  }

  let current = loan;
  // A live loan is sent from the tenant's DISBURSEMENT wallet, through its live pool on the loan's chain.
  const live = current.mode === "live" ? await liveFunding(deps, current, now) : null;
  if (live && !live.ok) return live.waiting;
  if (current.fundingState !== "RESERVED") {
    // `read`: the pool its caller read with the loan (processing's one batch of reads); poolFor otherwise.
    const pool = live?.ok ? live.pool : read !== undefined ? read : await poolFor(db, { tenantId: tenant.id, mode: current.mode }, current.stablecoin);
    if (!pool) return reportNoLiquidity(db, current, null, now);
    let reserved = await reserve(db, current, pool, now, live?.ok ? live.sender : null, judged!);
    if (!reserved) {
      const [fresh] = await db.select({ writeToken: loans.writeToken }).from(loans).where(eq(loans.id, current.id));
      if (fresh?.writeToken !== current.writeToken) throw conflict("The loan changed while it was being funded; retry");
      // The borrower's KYC, the policy or the setting changed since the hold was judged: judged again on fresh reads.
      const again = await readForUnderwriting(db, current);
      const held = await heldByRules(db, current, now, again);
      if (held) return held;
      reserved = await reserve(db, current, pool, now, live?.ok ? live.sender : null, again);
      if (!reserved) return reportNoLiquidity(db, current, pool, now);
    }
    current = reserved;
  }

  const poolId = current.poolId!;
  const source = live?.ok ? live.sender : (chainConfig(current.chain).fundingSource ?? "unconfigured");
  const principal = Number(current.principal);
  const sent = await deps.chain.transfer({
    ...(live?.ok && live.followOnly ? { followOnly: true } : {}),
    chain: current.chain,
    asset: current.stablecoin,
    from: source,
    to: current.borrowerWalletAddress,
    amount: current.principal,
    reference: `funding:${current.id}`,
    now,
    // The live adapter signs with this tenant's installed signer for `from`.
    tenantId: current.tenantId,
    // Live: the reservation it is sent under; a failure answered for it is final, so the releases below cannot let a run of it send later.
    ...(live?.ok ? { reservation: current.fundingReservation } : {}),
    // A sandbox loan is funded on its own tenant's ledger of the simulated chain.
    ...(isSandboxChain(current.chain) ? { sandboxTenantId: current.tenantId } : {}),
  });
  const settlement = (status: "CONFIRMED" | "FAILED", txHash: string | null, blockNumber: number | null = null, fromAddress: string = source) => ({
    id: newId(),
    tenantId: current.tenantId,
    loanId: current.id,
    kind: "FUNDING" as const,
    status,
    amount: current.principal,
    chain: current.chain,
    mode: current.mode,
    asset: current.stablecoin,
    txHash,
    fromAddress,
    toAddress: current.borrowerWalletAddress,
    blockNumber,
    logIndex: null,
    paidAt: now,
    createdAt: now,
  });

  if (sent.success === "pending") {
    // Broadcast but not yet final: the loan keeps its reservation and records the transaction; the
    // retry job asks again with the same reference, and the adapter answers for that one transaction.
    if (current.fundingTxHash === sent.txHash) return current;
    return (await commitUpdate(db, current, { fundingTxHash: sent.txHash }, now)) ?? current;
  }

  // Nothing in flight for a sender that may make no new attempt: the loan waits (its reservation released) with that reason.
  if (!sent.success && live?.ok && live.followOnly) return reportNoLiquidity(db, current, null, now, live.followOnly);

  if (!sent.success) {
    // The transfer failed: release the reservation; the cron retry job tries again.
    return commitTransition(db, {
      loan: current,
      trigger: { kind: "FUNDING_FAILED" },
      now,
      set: { fundingState: "NONE", poolId: null, fundingFrom: null },
      eventData: { reason: sent.errorReason },
      extraEvents: () => [],
      statements: (guard) => [
        db
          .update(liquidityPools)
          .set({ reserved: sql`${liquidityPools.reserved} - ${principal}` as unknown as bigint, updatedAt: now })
          .where(and(eq(liquidityPools.id, poolId), guard)),
        insertIf(db, settlements, settlement("FAILED", sent.txHash), guard),
      ],
    });
  }

  return commitTransition(db, {
    loan: current,
    trigger: { kind: "FUNDING_CONFIRMED" },
    now,
    set: { fundingState: "FUNDED", fundedAt: now, dueAt: dueAtFor(now, current.tenureDays), fundingTxHash: sent.txHash },
    statements: (guard, next) => [
      db
        .update(liquidityPools)
        .set({
          // Never below zero: a live pool's `available` mirrors its wallet's balance, which a refresh may already have read net of this transfer.
          available: sql`MAX(${liquidityPools.available} - ${principal}, 0)` as unknown as bigint,
          reserved: sql`${liquidityPools.reserved} - ${principal}` as unknown as bigint,
          updatedAt: now,
        })
        .where(and(eq(liquidityPools.id, poolId), guard)),
      // The wallet that paid, where the adapter knows it (a transfer sent under an earlier reservation from another wallet).
      settlementInsert(db, {
        ...settlement("CONFIRMED", sent.txHash, sent.blockNumber, sent.from ?? source),
        guardLoanId: next.id,
        guardToken: next.writeToken,
      }),
    ],
  });
}
