import { and, desc, eq, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { EventType } from "./loan-events.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Cursors of the event list (and of the notifications, which follow the
 * events' order): the id of the last event shown, opaque to callers
 * (base64url of `evt:<id>`). A page goes on below that event's `seq`, the
 * outbox's global order, so paging is stable while new events arrive: they
 * only ever go on top. The cursor names the event, not its `seq`: a `seq`
 * counts every tenant's events, and two cursors' difference would tell a
 * tenant how busy the others were (an audit read it so).
 */
export function encodeEventCursor(eventId: string): string {
  return btoa(`evt:${eventId}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Where a cursor goes on from: an event of the tenant, or (cursors issued before 2026-11-24) a `seq`. */
export type EventCursor = { eventId: string } | { seq: number };

/** The position in a cursor this service issued; null for anything else. */
export function decodeEventCursor(cursor: string): EventCursor | null {
  try {
    const text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const evt = /^evt:(.+)$/.exec(text);
    if (evt) return /^[0-9A-Za-z-]{1,64}$/.test(evt[1]!) ? { eventId: evt[1]! } : null;
    const seq = /^seq:(\d{1,15})$/.exec(text);
    return seq ? { seq: Number(seq[1]) } : null;
  } catch {
    return null;
  }
}

/**
 * The `seq` a page goes on below: the cursor's event's, read in the page's
 * own statement and only among the tenant's events (another tenant's or an
 * unknown event: NULL, which no row is below, so an empty page).
 */
export function seqBefore(tenantId: string, cursor: EventCursor | null): SQL | number | null {
  if (cursor === null) return null;
  if ("seq" in cursor) return cursor.seq;
  return sql`(SELECT ${events.seq} FROM ${events} WHERE ${events.id} = ${cursor.eventId} AND ${events.tenantId} = ${tenantId})`;
}

/** The envelope with its mode from the column: envelopes stored before modes lack it. */
const withMode = (r: { envelope: EventEnvelope; mode: TenantMode }): EventEnvelope => ({ ...r.envelope, mode: r.mode });

export type ListEventsInput = {
  tenantId: string;
  /** Only this mode's events (a key's own; a dashboard session's filter, if any). */
  mode?: TenantMode;
  type?: EventType;
  loanId?: string;
  limit: number;
  cursor?: string;
};

/**
 * A page of `listEvents` (one more row than the page, to know if there is a
 * next): of a loan through (tenant, loan, seq), its mode compared as `+mode`
 * (which SQLite never reads through an index: else (tenant, mode, seq) ties
 * and a loan's few events were found by walking the mode's history; a loan's
 * events all have its mode); of a type through (tenant, mode, type, seq)
 * (migration 0029), so a type is read in its mode only; otherwise (tenant,
 * mode, seq) or (tenant, seq). Plans tested in
 * shared/loans/history-plans.test.ts.
 */
export function eventsPageQuery(db: Db, input: Omit<ListEventsInput, "cursor">, before: SQL | number | null) {
  const byLoan = input.loanId !== undefined;
  return db
    .select({ id: events.id, seq: events.seq, envelope: events.envelope, mode: events.mode })
    .from(events)
    .where(
      and(
        eq(events.tenantId, input.tenantId),
        equalsTerm(events.mode, input.mode, byLoan),
        equalsTerm(events.type, input.type, byLoan),
        input.loanId ? eq(events.loanId, input.loanId) : undefined,
        before === null ? undefined : lt(events.seq, before),
      ),
    )
    .orderBy(desc(events.seq))
    .limit(input.limit + 1);
}

/**
 * The tenant's events from the outbox, newest first (by `seq`), each as its
 * envelope (DECISIONS.md "Webhooks, notifications"). A type of both modes (a
 * dashboard session's, without `mode`): each mode's page, read in one batch,
 * merged by `seq`. A loan filter of another tenant's loan matches nothing.
 */
export async function listEvents({ db }: Pick<VerbDeps, "db">, input: ListEventsInput): Promise<{ data: EventEnvelope[]; nextCursor: string | null }> {
  const cursor = input.cursor === undefined ? null : decodeEventCursor(input.cursor);
  if (input.cursor !== undefined && cursor === null) throw new RangeError("invalid cursor"); // the edge validates cursors
  const before = seqBefore(input.tenantId, cursor);
  const perMode = input.type !== undefined && input.mode === undefined && input.loanId === undefined;
  const rows = perMode
    ? (await db.batch([eventsPageQuery(db, { ...input, mode: "sandbox" }, before), eventsPageQuery(db, { ...input, mode: "live" }, before)]))
        .flat()
        .sort((a, b) => b.seq - a.seq)
        .slice(0, input.limit + 1)
    : await eventsPageQuery(db, input, before);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return { data: page.map(withMode), nextCursor: rows.length > input.limit && last ? encodeEventCursor(last.id) : null };
}

/** One event of the tenant; another tenant's (or none): 404. */
export async function getEvent({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; id: string; mode?: TenantMode }): Promise<EventEnvelope> {
  if (!isUuid(input.id)) throw notFound("Event");
  const [row] = await db
    .select({ envelope: events.envelope, mode: events.mode })
    .from(events)
    .where(and(eq(events.id, input.id), eq(events.tenantId, input.tenantId), input.mode ? eq(events.mode, input.mode) : undefined))
    .limit(1);
  if (!row) throw notFound("Event");
  return withMode(row);
}
