import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { insertIf } from "../../db/guarded-writes.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import type { LoanRow } from "../../db/schema/loans.ts";
import { newId } from "../domain/ids.ts";
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

/** The outbox insert of one event, written only if `condition` holds (the state change it belongs to). */
export function eventInsertIf(db: Db, envelope: EventEnvelope, loanId: string | null, condition: SQL) {
  return insertIf(
    db,
    events,
    {
      id: envelope.id,
      seq: sql`(SELECT COALESCE(MAX(${events.seq}), 0) + 1 FROM ${events})`,
      tenantId: envelope.tenantId,
      type: envelope.type,
      mode: envelope.mode,
      loanId,
      envelope,
      createdAt: new Date(envelope.createdAt),
      relayedAt: null,
    },
    condition,
  );
}
