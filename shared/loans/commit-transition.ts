import { and, eq, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/create-db.ts";
import { preparedStatement } from "../../db/prepared-statements.ts";
import type { EventEnvelope } from "../../db/schema/events.ts";
import { loans, type LoanRow } from "../../db/schema/loans.ts";
import { conflict } from "../domain/errors.ts";
import { transition, type LoanState, type LoanTrigger } from "../domain/loan-state-machine.ts";
import { loanEnvelope, loanEventInsert } from "../events/loan-events.ts";
import { loanCarries, newWriteToken } from "./loan-guard.ts";

export const stateOf = (loan: LoanRow): LoanState => ({
  status: loan.status,
  outcome: loan.decisionOutcome,
  overdue: loan.overdueAt !== null,
});

export type TransitionPlan = {
  loan: LoanRow;
  trigger: LoanTrigger;
  now: Date;
  /** Column changes besides status and outcome (timestamps, amounts, tx hash…). */
  set?: Partial<LoanRow>;
  /** Fields added to the transition's own events' data (e.g. why funding failed). */
  eventData?: Record<string, unknown>;
  /** Events beyond the transition's own (e.g. `liquidity.unavailable`), built from the new row. */
  extraEvents?: (next: LoanRow) => EventEnvelope[];
  /** Rows that belong to the change (settlements, pool movements), written only if it commits. */
  statements?: (guard: SQL, next: LoanRow) => BatchItem<"sqlite">[];
  /**
   * Statements that run before the loan's update, in the same batch: a claim
   * the change depends on (an unmatched payment taken for this loan), made
   * only while the loan still carries `readToken`. With `condition` the
   * loan's update then holds only if the claim was made by this batch.
   */
  before?: (readToken: SQL, next: LoanRow) => BatchItem<"sqlite">[];
  /** An extra condition on the loan's update (see `before`): false means 409 and nothing written. */
  condition?: SQL;
  /**
   * A change that follows the transition in the same batch, on the state it
   * commits (the reservation that comes with an approval), or null for none.
   * The transition commits whether or not the follow-up's condition holds;
   * the row returned has the follow-up's columns only if it committed too.
   */
  followUp?: (next: LoanRow) => FollowUp | null;
};

/** A change of a loan's columns that is no transition, with its rows and its condition (see `commitUpdate`). */
export type FollowUp = {
  set: Partial<LoanRow>;
  /** Rows that belong to the change, written only if it commits (`guard`: the loan carries the change's token). */
  statements?: (guard: SQL, next: LoanRow) => BatchItem<"sqlite">[];
  /** A condition on the change besides the loan's write token (e.g. the pool's headroom). */
  condition?: SQL;
};

/**
 * The loan's update of a change from `loan` to `next`, conditional on
 * `loan`'s write token (and `condition`), returning its id. Without a
 * condition, its SQL is built once per database and set of changed columns
 * (db/prepared-statements.ts): a handful of shapes cover every transition.
 */
function guardedUpdate(db: Db, loan: LoanRow, next: LoanRow, condition?: SQL) {
  const changes = changedColumns(loan, next);
  if (condition) {
    return db
      .update(loans)
      .set(changes)
      .where(and(eq(loans.id, loan.id), eq(loans.tenantId, loan.tenantId), eq(loans.writeToken, loan.writeToken), condition))
      .returning({ id: loans.id });
  }
  const columns = Object.keys(changes);
  const shape = columns.join(",");
  let statement = updatesByShape.get(shape);
  if (!statement) {
    statement = preparedStatement<Record<string, unknown>>((d, p) =>
      d
        .update(loans)
        .set(Object.fromEntries(columns.map((column) => [column, p(column)])))
        .where(and(eq(loans.id, p("guardId")), eq(loans.tenantId, p("guardTenantId")), eq(loans.writeToken, p("guardToken"))))
        .returning({ id: loans.id }),
    );
    updatesByShape.set(shape, statement);
  }
  return statement(db, { ...changes, guardId: loan.id, guardTenantId: loan.tenantId, guardToken: loan.writeToken });
}

/** The prepared guarded updates, by their changed columns (in `changedColumns`' order). */
const updatesByShape = new Map<string, (db: Db, values: Record<string, unknown>) => BatchItem<"sqlite">>();

/**
 * The columns an update writes: those of `next` that are not the very
 * value `loan` holds (a new object, such as a Date, counts as changed), never
 * the identity. Every update is conditional on the write token `loan` was
 * read with, so the row it changes is `loan`: writing the rest again would
 * change nothing, and building the statement for all the loan's columns
 * costs more than the round trip.
 */
function changedColumns(loan: LoanRow, next: LoanRow): Partial<LoanRow> {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(next) as (keyof LoanRow)[]) {
    if (key === "id" || key === "tenantId" || key === "createdAt" || next[key] === undefined) continue;
    if (next[key] !== loan[key]) changes[key] = next[key];
  }
  return changes as Partial<LoanRow>;
}

/**
 * The batch of a transition, built and not yet run: its statements in
 * order, where the loan's update and the follow-up's update are in it, and
 * the rows the loan becomes if they commit. `commitTransition` runs it
 * alone; loan creation runs its decision after the loan's insert, in the
 * insert's own batch (create-loan.ts).
 */
export type PlannedTransition = {
  statements: [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
  /** Index in `statements` of the loan's guarded update (its result: the updated ids). */
  updateAt: number;
  /** Index of the follow-up's guarded update, when there is a follow-up. */
  followUpAt: number | null;
  next: LoanRow;
  after: LoanRow | null;
};

/**
 * The loan an event of a transition shows (`data.loan`: the loan as the API
 * shows it when the event happened). A sweep that finds a loan past grace
 * that was never marked overdue moves it ACTIVE → DEFAULTED with both
 * `loan.overdue` and `loan.defaulted`; the overdue one shows the loan as it
 * was just before the default (ACTIVE, overdue, its late fee days), not
 * already DEFAULTED.
 */
function asOf(type: string, next: LoanRow): LoanRow {
  return type === "loan.overdue" && next.status === "DEFAULTED" ? { ...next, status: "ACTIVE", defaultedAt: null, defaultRecordedAt: null } : next;
}

/**
 * Applies a trigger of the pure transition table and plans its commit: the
 * new state, its events and its rows, conditional on the loan still
 * carrying the write token it was read with. Refused transitions: 409.
 */
export function planTransition(db: Db, plan: TransitionPlan): PlannedTransition {
  const { loan, trigger, now } = plan;
  const result = transition(stateOf(loan), trigger);
  if (!result.ok) throw conflict(result.reason);
  const next: LoanRow = {
    ...loan,
    ...plan.set,
    status: result.next.status,
    decisionOutcome: result.next.outcome,
    overdueAt: result.next.overdue ? (loan.overdueAt ?? plan.set?.overdueAt ?? now) : null,
    writeToken: newWriteToken(),
    updatedAt: now,
  };
  const guard = loanCarries(loan.id, next.writeToken);
  const envelopes = [...result.events.map((type) => loanEnvelope(type, asOf(type, next), now, plan.eventData)), ...(plan.extraEvents?.(next) ?? [])];
  const before = plan.before?.(loanCarries(loan.id, loan.writeToken), next) ?? [];
  const own = [
    guardedUpdate(db, loan, next, plan.condition),
    ...envelopes.map((e) => loanEventInsert(db, e, loan.id, next.writeToken)),
    ...(plan.statements?.(guard, next) ?? []),
  ];
  // The follow-up: a second update of the loan, on the token this transition gives it.
  const followUp = plan.followUp?.(next) ?? null;
  const after: LoanRow | null = followUp ? { ...next, ...followUp.set, writeToken: newWriteToken(), updatedAt: now } : null;
  const followed =
    followUp && after
      ? [guardedUpdate(db, next, after, followUp.condition), ...(followUp.statements?.(loanCarries(loan.id, after.writeToken), after) ?? [])]
      : [];
  return {
    statements: [...before, ...own, ...followed] as PlannedTransition["statements"],
    updateAt: before.length,
    followUpAt: after ? before.length + own.length : null,
    next,
    after,
  };
}

/**
 * The loan a planned transition's batch results say it became: `after`
 * (with the follow-up) or `next`; null when the loan's update did not hold.
 * `offset`: where the plan's statements start in the batch that ran them.
 */
export function transitionOutcome(planned: PlannedTransition, results: unknown[], offset = 0): LoanRow | null {
  const updated = results[offset + planned.updateAt] as { id: string }[];
  if (updated.length !== 1) return null;
  if (planned.after && planned.followUpAt !== null && (results[offset + planned.followUpAt] as { id: string }[]).length === 1) return planned.after;
  return planned.next;
}

/**
 * Applies a trigger of the pure transition table and commits the new state,
 * its events and its rows in one batch, conditional on the loan still
 * carrying the write token it was read with. Refused transitions: 409.
 */
export async function commitTransition(db: Db, plan: TransitionPlan): Promise<LoanRow> {
  const planned = planTransition(db, plan);
  const outcome = transitionOutcome(planned, await db.batch(planned.statements));
  if (!outcome) throw conflict("The loan changed while this change was being made; retry");
  return outcome;
}

/**
 * A change of columns that is no transition (funding bookkeeping such as
 * WAITING_KYC or RESERVED), with the same token discipline and optional rows.
 */
export async function commitUpdate(
  db: Db,
  loan: LoanRow,
  set: Partial<LoanRow>,
  now: Date,
  statements?: (guard: SQL, next: LoanRow) => BatchItem<"sqlite">[],
  condition?: SQL,
): Promise<LoanRow | null> {
  const next: LoanRow = { ...loan, ...set, writeToken: newWriteToken(), updatedAt: now };
  const [updated] = await db.batch([guardedUpdate(db, loan, next, condition), ...(statements?.(loanCarries(loan.id, next.writeToken), next) ?? [])]);
  return updated.length === 1 ? next : null;
}
