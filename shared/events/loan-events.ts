import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { placeholderRow, preparedStatement } from "../../db/prepared-statements.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { newId } from "../domain/ids.ts";
import { loanCarries } from "../loans/loan-guard.ts";
import { loanView } from "../loans/loan-view.ts";

export type EventType = EventEnvelope["type"];

/** The envelope of DECISIONS.md: `data.loan` is the loan as the API shows it at the event. */
export function loanEnvelope(type: EventType, loan: LoanRow, now: Date, extra: Record<string, unknown> = {}): EventEnvelope {
  return {
    id: newId(),
    type,
    createdAt: now.toISOString(),
    tenantId: loan.tenantId,
    mode: loan.mode,
    data: { loan: loanView(loan, now), ...extra },
    program: loan.programId ?? null,
    channel: loan.channel ?? null,
  };
}

/**
 * `eventInsertIf` with a condition of a fixed shape, its SQL built once per
 * database (db/prepared-statements.ts): `condition` writes the condition
 * with `p(name)` where its values go, and each call passes them.
 */
export function preparedEventInsert<C extends Record<string, unknown>>(condition: (p: <T>(name: keyof C & string) => T) => SQL) {
  const statement = preparedStatement<OutboxRow & C>((db, p) =>
    insertIf(db, events, { ...placeholderRow(events, p), seq: nextSeq(), relayedAt: null }, condition(p)),
  );
  return (db: Db, envelope: EventEnvelope, loanId: string | null, values: C) => statement(db, { ...outboxRow(envelope, loanId), ...values });
}

const loanEventStatement = preparedEventInsert<{ guardLoanId: string; guardToken: string }>((p) => loanCarries(p("guardLoanId"), p("guardToken")));

/**
 * The outbox insert of a loan's event, written only if the loan then carries
 * `token` (the write token of the change it belongs to): `eventInsertIf`
 * with `loanCarries(loanId, token)`, prepared. Every transition's events go
 * through it.
 */
export const loanEventInsert = (db: Db, envelope: EventEnvelope, loanId: string, token: string) =>
  loanEventStatement(db, envelope, loanId, { guardLoanId: loanId, guardToken: token });

/** An event's outbox row, besides its `seq` (the insert's own) and `relayedAt` (null until relayed). */
const outboxRow = (envelope: EventEnvelope, loanId: string | null) => ({
  id: envelope.id,
  tenantId: envelope.tenantId,
  type: envelope.type,
  mode: envelope.mode,
  loanId,
  envelope,
  createdAt: new Date(envelope.createdAt),
});
type OutboxRow = ReturnType<typeof outboxRow>;

/** The outbox's next `seq`, evaluated by the insert itself. */
const nextSeq = () => sql`(SELECT COALESCE(MAX(${events.seq}), 0) + 1 FROM ${events})`;

/** The outbox insert of one event, written only if `condition` holds (the state change it belongs to). */
export function eventInsertIf(db: Db, envelope: EventEnvelope, loanId: string | null, condition: SQL) {
  return insertIf(db, events, { ...outboxRow(envelope, loanId), seq: nextSeq(), relayedAt: null }, condition);
}
