import { and, asc, eq, gte, inArray, lt, notExists, or, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { emailReleases } from "../../db/schema/email-releases.ts";
import { emailVerifications } from "../../db/schema/email-verifications.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { walletChallenges } from "../../db/schema/wallets.ts";
import { notifications, webhookAttempts, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { loanIsOpen } from "../loans/open-loans.ts";

/** How long history is kept unless RETENTION_DAYS says otherwise (README "Retention"). */
export const DEFAULT_RETENTION_DAYS = 90;
/**
 * The shortest period accepted, so a mistyped RETENTION_DAYS cannot erase
 * the recent history merchants reconcile from (GET /v1/events, deliveries,
 * notifications). Open loans' events are kept whatever the period.
 */
export const MIN_RETENTION_DAYS = 30;
/** Events removed per batch, each with its notification, deliveries and their attempts. */
export const EVENTS_PER_BATCH = 500;
/** Batches per run: at most 2,000 events per run, so one run stays well inside one invocation. */
export const BATCHES_PER_RUN = 4;
/** Expired challenges and verification links removed per run, per table. */
export const TOKENS_PER_RUN = 500;

export type PurgeReport = {
  events: number;
  notifications: number;
  deliveries: number;
  attempts: number;
  walletChallenges: number;
  emailVerifications: number;
  emailReleases: number;
};

export type PurgeInput = {
  now: Date;
  retentionDays: number;
  eventsPerBatch?: number;
  batchesPerRun?: number;
  tokensPerRun?: number;
};

/**
 * The next `limit` events whose whole history may go, oldest relay first:
 * relayed before `cutoff`; not the newest event (its `seq` is where the next
 * event's is counted from, and event cursors must never see a `seq` again);
 * no delivery of it still PENDING (first attempt or retrying) or touched
 * since the cutoff (a recent manual redelivery keeps its event); its owner
 * e-mail not still PENDING; its loan, if any, no longer open (`loanIsOpen`:
 * to be funded, ACTIVE or DEFAULTED; a loan's events stay for as long as it
 * is owed). Read through `events_unrelayed_idx` by
 * (relayed_at, seq), and by event id in deliveries and notifications.
 */
export function expiredEventIds(db: Db, cutoff: Date, limit: number) {
  return db
    .select({ id: events.id })
    .from(events)
    .where(
      and(
        lt(events.relayedAt, cutoff),
        sql`${events.seq} < (SELECT MAX(${events.seq}) FROM ${events})`,
        notExists(
          db
            .select({ one: sql`1` })
            .from(webhookDeliveries)
            .where(and(eq(webhookDeliveries.eventId, events.id), or(eq(webhookDeliveries.status, "PENDING"), gte(webhookDeliveries.updatedAt, cutoff)))),
        ),
        notExists(
          db
            .select({ one: sql`1` })
            .from(notifications)
            .where(and(eq(notifications.eventId, events.id), eq(notifications.emailStatus, "PENDING"))),
        ),
        notExists(
          db
            .select({ one: sql`1` })
            .from(loans)
            .where(and(eq(loans.id, events.loanId), loanIsOpen())),
        ),
      ),
    )
    .orderBy(asc(events.relayedAt), asc(events.seq))
    .limit(limit);
}

/**
 * The statements of one batch (one transaction): the attempts, deliveries and notification of
 * the next expired events, then the events. Every statement names the same
 * events by the same ordered, limited read, and nothing it deletes changes
 * which events qualify, so the four agree; a delivery or e-mail made PENDING
 * meanwhile keeps its event, since each statement checks again.
 */
export function purgeEventsStatements(db: Db, cutoff: Date, limit: number) {
  const ids = () => expiredEventIds(db, cutoff, limit);
  return [
    db
      .delete(webhookAttempts)
      .where(
        inArray(webhookAttempts.deliveryId, db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids()))),
      )
      .returning({ id: webhookAttempts.id }),
    db.delete(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids())).returning({ id: webhookDeliveries.id }),
    db.delete(notifications).where(inArray(notifications.eventId, ids())).returning({ id: notifications.id }),
    db.delete(events).where(inArray(events.id, ids())).returning({ id: events.id }),
  ] as const;
}

/** Proof-of-control challenges (valid minutes) expired before `cutoff`, at most `limit`. */
export function purgeWalletChallenges(db: Db, cutoff: Date, limit: number) {
  const expired = db.select({ id: walletChallenges.id }).from(walletChallenges).where(lt(walletChallenges.expiresAt, cutoff)).limit(limit);
  return db.delete(walletChallenges).where(inArray(walletChallenges.id, expired)).returning({ id: walletChallenges.id });
}

/** E-mail verification links (used or not) expired before `cutoff`, at most `limit`. */
export function purgeEmailVerifications(db: Db, cutoff: Date, limit: number) {
  const expired = db.select({ id: emailVerifications.id }).from(emailVerifications).where(lt(emailVerifications.expiresAt, cutoff)).limit(limit);
  return db.delete(emailVerifications).where(inArray(emailVerifications.id, expired)).returning({ id: emailVerifications.id });
}

/** E-mail release links (used or not) expired before `cutoff`, at most `limit`. */
export function purgeEmailReleases(db: Db, cutoff: Date, limit: number) {
  const expired = db.select({ id: emailReleases.id }).from(emailReleases).where(lt(emailReleases.expiresAt, cutoff)).limit(limit);
  return db.delete(emailReleases).where(inArray(emailReleases.id, expired)).returning({ id: emailReleases.id });
}

/**
 * The retention pass (README "Retention"): removes what only grows and is
 * older than `retentionDays`: relayed events with their notifications,
 * finished deliveries and attempts, in batches of `eventsPerBatch` events,
 * at most `batchesPerRun` batches; then expired wallet challenges and
 * e-mail verification and release links, at most `tokensPerRun` of each. A backlog is
 * worked off over the following runs.
 */
export async function purgeHistory({ db }: { db: Db }, input: PurgeInput): Promise<PurgeReport> {
  const { eventsPerBatch = EVENTS_PER_BATCH, batchesPerRun = BATCHES_PER_RUN, tokensPerRun = TOKENS_PER_RUN } = input;
  const cutoff = new Date(input.now.getTime() - input.retentionDays * DAY_MS);
  const report: PurgeReport = { events: 0, notifications: 0, deliveries: 0, attempts: 0, walletChallenges: 0, emailVerifications: 0, emailReleases: 0 };
  for (let i = 0; i < batchesPerRun; i++) {
    const [attempts, deliveries, notes, gone] = await db.batch(purgeEventsStatements(db, cutoff, eventsPerBatch));
    report.attempts += attempts.length;
    report.deliveries += deliveries.length;
    report.notifications += notes.length;
    report.events += gone.length;
    if (gone.length < eventsPerBatch) break;
  }
  const [challenges, verifications, releases] = await db.batch([
    purgeWalletChallenges(db, cutoff, tokensPerRun),
    purgeEmailVerifications(db, cutoff, tokensPerRun),
    purgeEmailReleases(db, cutoff, tokensPerRun),
  ]);
  report.walletChallenges = challenges.length;
  report.emailVerifications = verifications.length;
  report.emailReleases = releases.length;
  return report;
}
