import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { webhookEndpoints } from "../../db/schema/webhooks.ts";
import type { AttemptResult } from "./send-attempt.ts";

/**
 * Endpoints that keep timing out are paused (migration 0046). An attempt to
 * an endpoint that never answers holds one of a consumer invocation's six
 * request slots (send-slots.ts) for the whole delivery timeout, and the
 * deliveries queue is shared by every tenant: an audit had one free sandbox
 * tenant's 10 hanging endpoints delay every other tenant's webhooks by
 * minutes, growing for hours. So after TIMEOUTS_TO_PAUSE timeouts in a row,
 * an endpoint's attempts wait until its `paused_until`, unsent: they go back
 * to the Queue at no slot and count as no attempt (each delivery still gets
 * its 3 real attempts, later). The pause is 3 timeouts long (30 s in
 * production) and doubles with each further timeout, up to 10 minutes. Any
 * answer, whatever its status, ends it, and an endpoint that answered
 * anything within the last QUIET_TIMEOUTS timeouts (60 s), or was registered
 * within them, is not paused: a flaky endpoint that times out now and then
 * (or on each event's first delivery only) is not dead. An endpoint that
 * refuses connections or answers errors at once holds no slot for long and
 * is never paused.
 */
export const TIMEOUTS_TO_PAUSE = 3;

/** An endpoint that answered within this many delivery timeouts is not paused, however many timeouts in a row. */
export const QUIET_TIMEOUTS = 6;

/** The longest pause: 10 minutes (an endpoint back up resumes at most that long, and half again, after it answers). */
export const MAX_PAUSE_MS = 10 * 60 * 1000;

/** The first pause, in delivery timeouts. */
const FIRST_PAUSE_TIMEOUTS = 3;

/** Whether the attempt timed out (no answer within the delivery timeout, send-attempt.ts). */
export const timedOut = (result: AttemptResult): boolean => result.timedOut === true;

/** Whether an attempt to this endpoint must wait now; the time it waits until when it must. */
export const pausedUntil = (endpointPausedUntil: number | null, now: Date): number | null =>
  endpointPausedUntil !== null && endpointPausedUntil > now.getTime() ? endpointPausedUntil : null;

/**
 * The seconds a paused attempt goes back to the Queue for: until the pause
 * ends, plus up to half of it again at random, so an endpoint's waiting
 * attempts do not all come back the moment it ends (the first ones find out
 * whether it answers; the rest find it paused again, or answering).
 */
export function pausedDelaySeconds(until: number, now: Date, random = Math.random): number {
  const left = Math.max(0, until - now.getTime());
  return Math.max(1, Math.ceil((left + random() * left * 0.5) / 1000));
}

/**
 * The statements that record what a group of finished attempts says of their
 * endpoints: an endpoint that answered any of them is reset (not paused, no
 * timeouts); one whose attempts timed out counts them, and is paused once
 * TIMEOUTS_TO_PAUSE are in a row. A statement per endpoint that timed out,
 * one for all that answered (only rows that change are written).
 */
export function endpointHealthStatements(db: Db, attempts: { endpointId: string; attempt: number; result: AttemptResult }[], now: Date, timeoutMs: number) {
  const answered = new Set(attempts.filter((a) => a.result.responseStatus !== null).map((a) => a.endpointId));
  const timeouts = new Map<string, number>();
  for (const a of attempts) if (timedOut(a.result) && !answered.has(a.endpointId)) timeouts.set(a.endpointId, (timeouts.get(a.endpointId) ?? 0) + 1);
  const firstPause = FIRST_PAUSE_TIMEOUTS * timeoutMs;
  const at = now.getTime();
  const statements = [...timeouts].map(([endpointId, n]) => {
    const count = sql`(${webhookEndpoints.timeoutsInARow} + ${n})`;
    // Quiet: no answer (or, never answered, no registration) within QUIET_TIMEOUTS timeouts.
    const quiet = sql`COALESCE(${webhookEndpoints.answeredAt}, ${webhookEndpoints.createdAt}) < ${at - QUIET_TIMEOUTS * timeoutMs}`;
    return db
      .update(webhookEndpoints)
      .set({
        timeoutsInARow: count as unknown as number,
        // SQLite's << doubles the first pause per timeout past the threshold (the shift capped well before it overflows).
        pausedUntil:
          sql`CASE WHEN ${count} >= ${TIMEOUTS_TO_PAUSE} AND ${quiet} THEN ${at} + MIN(${firstPause} << MIN(${count} - ${TIMEOUTS_TO_PAUSE}, 20), ${MAX_PAUSE_MS}) ELSE ${webhookEndpoints.pausedUntil} END` as unknown as number,
      })
      .where(eq(webhookEndpoints.id, endpointId));
  });
  if (answered.size > 0) {
    // Written only when something changes, or the answer last noted is a timeout old: at most once a timeout per endpoint.
    statements.push(
      db
        .update(webhookEndpoints)
        .set({ timeoutsInARow: 0, pausedUntil: null, answeredAt: at })
        .where(
          sql`${webhookEndpoints.id} IN (SELECT value FROM json_each(${JSON.stringify([...answered])})) AND (${webhookEndpoints.timeoutsInARow} > 0 OR ${webhookEndpoints.pausedUntil} IS NOT NULL OR ${webhookEndpoints.answeredAt} IS NULL OR ${webhookEndpoints.answeredAt} < ${at - timeoutMs})`,
        ),
    );
  }
  return statements;
}
