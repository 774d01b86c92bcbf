import { and, desc, eq, gte, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { newestFirst, pageOf } from "../../db/pagination.ts";
import { equalsTerm } from "../../db/index-terms.ts";
import type { Db } from "../../db/create-db.ts";
import { users } from "../../db/schema/users.ts";
import { mailbox, notifications } from "../../db/schema/webhooks.ts";
import { notFound } from "../domain/errors.ts";
import { isUuid } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";
import { encodeEventCursor, seqOfCursor } from "../events/list-events.ts";
import type { VerbDeps } from "../verbs.ts";

export type Notification = typeof notifications.$inferSelect;

/**
 * A page of `listNotifications` (one more row than the page): newest first
 * by the event's `seq`, which each notification carries (migration 0026).
 * Unread ones are read through the index that holds only them; otherwise
 * (tenant_id, mode, event_seq) or (tenant_id, event_seq). With the unread
 * filter the mode is compared as `+mode`, so (tenant_id, mode, event_seq)
 * cannot tie with the unread index and walk the mode's read ones. Plans
 * tested (shared/loans/history-plans.test.ts).
 */
export function notificationsPageQuery(db: Db, input: { tenantId: string; mode?: TenantMode; unread?: boolean; limit: number }, before: number | null) {
  const mode = equalsTerm(notifications.mode, input.mode, input.unread === true);
  return db
    .select()
    .from(notifications)
    .where(
      and(
        eq(notifications.tenantId, input.tenantId),
        mode,
        input.unread === undefined ? undefined : input.unread ? isNull(notifications.readAt) : isNotNull(notifications.readAt),
        before === null ? undefined : lt(notifications.eventSeq, before),
      ),
    )
    .orderBy(desc(notifications.eventSeq))
    .limit(input.limit + 1);
}

/**
 * The tenant's notifications (one per event), newest first in the events'
 * commit order (the outbox `seq`, as `GET /v1/events`), so the events of one
 * loan, often recorded within one millisecond, keep their order.
 * `unread: true` gives only the unread ones, `unread: false` only the read
 * ones. Cursors are the event list's (the last shown's event's `seq`, sealed).
 */
export async function listNotifications(
  { db, secretsKey }: Pick<VerbDeps, "db"> & { secretsKey: string },
  input: { tenantId: string; mode?: TenantMode; unread?: boolean; limit: number; cursor?: string },
): Promise<{ data: Notification[]; nextCursor: string | null }> {
  const rows = await notificationsPageQuery(db, input, await seqOfCursor(secretsKey, input.tenantId, input.cursor));
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return { data: page, nextCursor: rows.length > input.limit && last ? await encodeEventCursor(input.tenantId, last.eventSeq, secretsKey) : null };
}

/**
 * Marks one notification read. Idempotent: the update only touches an
 * unread row, so the first `readAt` is kept. Another tenant's: not found.
 */
/**
 * The time a notification is read, on its own mode's clock, as it was
 * created: a sandbox notification on the tenant's sandbox clock (moved by
 * POST /v1/sandbox/clock/advance), a live one on the system clock. On one
 * clock for both, a notification read after a clock advance read a day
 * before it was created.
 */
export type NowByMode = Record<TenantMode, Date>;
const readAtOf = (now: NowByMode) => sql`CASE WHEN ${notifications.mode} = 'live' THEN ${now.live.getTime()} ELSE ${now.sandbox.getTime()} END`;

export async function markNotificationRead(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode?: TenantMode; id: string; now: NowByMode },
): Promise<Notification> {
  if (!isUuid(input.id)) throw notFound("Notification");
  // An API key's mode too: another mode's notification is not found, like another tenant's.
  const mine = and(eq(notifications.id, input.id), eq(notifications.tenantId, input.tenantId), input.mode ? eq(notifications.mode, input.mode) : undefined);
  const [, [row]] = await db.batch([
    db
      .update(notifications)
      .set({ readAt: readAtOf(input.now) as unknown as Date })
      .where(and(mine, isNull(notifications.readAt))),
    db.select().from(notifications).where(mine).limit(1),
  ]);
  if (!row) throw notFound("Notification");
  return row;
}

/** Marks every unread notification of the tenant (of one mode, for an API key) read; returns how many changed. */
export async function markAllNotificationsRead(
  { db }: Pick<VerbDeps, "db">,
  input: { tenantId: string; mode?: TenantMode; now: NowByMode },
): Promise<{ updated: number }> {
  const changed = await markAllReadStatement(db, input).returning({ id: notifications.id });
  return { updated: changed.length };
}

/** The update of `markAllNotificationsRead`: through the unread index only (`+mode`, as the unread list). */
export const markAllReadStatement = (db: Db, input: { tenantId: string; mode?: TenantMode; now: NowByMode }) =>
  db
    .update(notifications)
    .set({ readAt: readAtOf(input.now) as unknown as Date })
    .where(and(eq(notifications.tenantId, input.tenantId), equalsTerm(notifications.mode, input.mode, true), isNull(notifications.readAt)));

export type MailboxMessage = typeof mailbox.$inferSelect;

/**
 * The development mailbox (where local runs "send" e-mail), limited to
 * messages addressed to the tenant's users, newest first. The mailbox itself
 * is not per tenant: it is keyed by address, as real e-mail is.
 */
export async function listMailboxForTenant({ db }: Pick<VerbDeps, "db">, input: { tenantId: string; userId: string; limit: number; cursor?: string }) {
  const page = newestFirst(mailbox, input.cursor);
  const rows: MailboxMessage[] = await db
    .select({
      id: mailbox.id,
      toAddress: mailbox.toAddress,
      subject: mailbox.subject,
      body: mailbox.body,
      notificationId: mailbox.notificationId,
      createdAt: mailbox.createdAt,
    })
    .from(mailbox)
    // users.email is stored lower-cased.
    // The caller's own mail only (a MEMBER must not read, and follow, the owner's verification link), and only
    // since it became a user: an address freed by a removal and added again does not read its past owner's mail.
    .innerJoin(
      users,
      and(
        eq(users.email, sql`lower(${mailbox.toAddress})`),
        eq(users.tenantId, input.tenantId),
        eq(users.id, input.userId),
        gte(mailbox.createdAt, users.createdAt),
      ),
    )
    .where(page.where)
    .orderBy(...page.orderBy)
    .limit(input.limit + 1);
  return pageOf(rows, input.limit);
}
