import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { openSecret, sealSecret } from "../crypto/secret-box.ts";
import { notFound, validationError } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import type { EventType } from "./loan-events.ts";
import type { VerbDeps } from "../verbs.ts";

/**
 * Cursors of the event list (and of the notifications, which follow the
 * events' order): the `seq` of the last event shown and the tenant's id,
 * sealed with AES-GCM under `SECRETS_KEY` (shared/crypto/secret-box.ts), so
 * a cursor is opaque and cannot be made up. `seq` is the outbox's global
 * order, so paging is stable while new events arrive (they only ever go on
 * top) and goes on below an event retention removed meanwhile. Shown in the
 * clear (or accepted when crafted), two cursors' difference would tell a
 * tenant how many events other tenants had (an audit counted them so). A
 * cursor of another tenant, sealed under a rotated key, or issued before
 * 2026-11-24 (`seq:<n>` in base64) is refused (400).
 */
export async function encodeEventCursor(tenantId: string, seq: number, secretsKey: string): Promise<string> {
  const [version, iv, ct] = (await sealSecret(`${tenantId}|${seq}`, secretsKey)).split(".");
  return `${version}.${toUrl(iv!)}.${toUrl(ct!)}`;
}

/** The `seq` of a cursor this service issued to this tenant; null for anything else. */
export async function decodeEventCursor(cursor: string, tenantId: string, secretsKey: string): Promise<number | null> {
  if (!looksLikeEventCursor(cursor)) return null;
  const [version, iv, ct] = cursor.split(".");
  try {
    const m = /^(.+)\|(\d{1,15})$/.exec(await openSecret(`${version}.${fromUrl(iv!)}.${fromUrl(ct!)}`, secretsKey));
    return m && m[1] === tenantId ? Number(m[2]) : null;
  } catch {
    return null;
  }
}

/** The shape of a cursor (the edge's check; only the verb, with the key, can open it). */
export const looksLikeEventCursor = (s: string) => /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{20,200}$/.test(s);

const toUrl = (b64: string) => b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromUrl = (b64url: string) => {
  const s = b64url.replace(/-/g, "+").replace(/_/g, "/");
  return s + "=".repeat((4 - (s.length % 4)) % 4);
};

/** The `seq` a page goes on below, from the request's cursor (none: the first page); a cursor it cannot open: 400. */
export async function seqOfCursor(secretsKey: string, tenantId: string, cursor: string | undefined): Promise<number | null> {
  if (cursor === undefined) return null;
  const seq = await decodeEventCursor(cursor, tenantId, secretsKey);
  if (seq === null) throw validationError(["cursor: is not a cursor this service issued to this account"]);
  return seq;
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
export function eventsPageQuery(db: Db, input: Omit<ListEventsInput, "cursor">, before: number | null) {
  const byLoan = input.loanId !== undefined;
  return db
    .select({ seq: events.seq, envelope: events.envelope, mode: events.mode })
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
export async function listEvents(
  { db, secretsKey }: Pick<VerbDeps, "db"> & { secretsKey: string },
  input: ListEventsInput,
): Promise<{ data: EventEnvelope[]; nextCursor: string | null }> {
  const before = await seqOfCursor(secretsKey, input.tenantId, input.cursor);
  const perMode = input.type !== undefined && input.mode === undefined && input.loanId === undefined;
  const rows = perMode
    ? (await db.batch([eventsPageQuery(db, { ...input, mode: "sandbox" }, before), eventsPageQuery(db, { ...input, mode: "live" }, before)]))
        .flat()
        .sort((a, b) => b.seq - a.seq)
        .slice(0, input.limit + 1)
    : await eventsPageQuery(db, input, before);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return { data: page.map(withMode), nextCursor: rows.length > input.limit && last ? await encodeEventCursor(input.tenantId, last.seq, secretsKey) : null };
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
