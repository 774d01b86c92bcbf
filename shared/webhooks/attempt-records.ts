import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { deterministicUuid } from "../domain/ids.ts";
import { eventInsertIf } from "../events/loan-events.ts";
import { clockOffsetFor } from "../tenants/tenant-context.ts";
import { advanceDeliveriesStatement, type AttemptOutcome, type DeliveryAdvance, finishAttemptsStatement } from "./attempt-statements.ts";
import type { DeliveryDeps, MessageOutcome } from "./deliver.ts";
import type { Loaded } from "./delivery-rows.ts";
import { MAX_ATTEMPTS } from "./messages.ts";
import type { AttemptResult } from "./send-attempt.ts";
import { endpointHealthStatements, pausedDelaySeconds } from "./endpoint-pause.ts";

/**
 * An attempt that got no request slot in time (send-slots.ts) goes back to
 * the Queue, alone, one delivery timeout later (10 s in production); its
 * claim is released and its delivery is due again then. A deferral is not an
 * attempt: the endpoint was never asked.
 */
export const deferredSeconds = (timeoutMs: number) => Math.max(1, Math.ceil(timeoutMs / 1000));

/**
 * A deferred attempt given back: its claim deleted (its request never went
 * out) and its delivery due when the re-sent message comes back, so the
 * recovery pass does not send it a second time meanwhile. Both only while
 * the delivery still waits for this attempt.
 */
export function deferralStatements(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number, seconds = deferredSeconds(deps.timeoutMs)) {
  const { db } = deps;
  const d = loaded.delivery;
  return [
    db.delete(webhookAttempts).where(and(eq(webhookAttempts.id, attemptId), isNull(webhookAttempts.finishedAt))),
    db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(deps.clock.now().getTime() + seconds * 1000) })
      .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.attemptCount, attempt - 1), eq(webhookDeliveries.status, "PENDING"))),
  ];
}

export const deferred = (deps: DeliveryDeps, seconds = deferredSeconds(deps.timeoutMs)): MessageOutcome => ({ ack: false, retryInSeconds: seconds });

/** How long an attempt not sent now goes back to the Queue for: a deferral's delivery timeout, or until its endpoint's pause ends. */
export const notSentSeconds = (deps: DeliveryDeps, loaded: Loaded, result: "deferred" | "paused"): number =>
  result === "paused" ? pausedDelaySeconds(loaded.endpointPausedUntil ?? 0, deps.clock.now()) : deferredSeconds(deps.timeoutMs);

/**
 * Records attempt `attempt`'s outcome and the delivery's new state in one
 * batch, conditional on the delivery still being at `attempt - 1` (so a
 * duplicate recording changes nothing). The final failure also writes
 * `webhook.delivery_failed` (its id derived from the delivery, so once),
 * except about a `webhook.delivery_failed` itself, which would let two dead
 * endpoints notify each other forever.
 */
export async function recordAttempt(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number, result: AttemptResult, delayOverride?: number) {
  const now = deps.clock.now();
  const record = await attemptRecord(deps, loaded, attemptId, attempt, result, now, delayOverride);
  const health = endpointHealthStatements(deps.db, [{ endpointId: loaded.delivery.endpointId, attempt, result }], now, deps.timeoutMs);
  await deps.db.batch([...recordStatements(deps.db, [record], now), ...health] as [never, ...never[]]);
  return record;
}

export type AttemptRecord = Awaited<ReturnType<typeof attemptRecord>>;

/**
 * The statements that record attempts' outcomes, however many: every outcome
 * in one statement, every delivery's advance in one, then the
 * `webhook.delivery_failed` of each delivery that ended FAILED (each
 * conditional on its delivery having ended so: after the advance).
 */
export function recordStatements(db: Db, records: AttemptRecord[], now: Date) {
  if (records.length === 0) return [];
  return [
    finishAttemptsStatement(
      db,
      records.map((r) => r.outcome),
    ),
    advanceDeliveriesStatement(
      db,
      records.map((r) => r.advance),
      now,
    ),
    ...records.flatMap((r) => r.failureEvent),
  ];
}

/** An attempt's outcome (attempt-statements.ts rows), and what follows from it. */
export async function attemptRecord(
  deps: DeliveryDeps,
  loaded: Loaded,
  attemptId: string,
  attempt: number,
  result: AttemptResult,
  now: Date,
  delayOverride?: number,
) {
  const { db } = deps;
  // An attempt for a deleted endpoint (one claimed as it was deleted: deleteEndpoint ends the others) is the last.
  const final = result.succeeded || attempt >= MAX_ATTEMPTS || result.endpointDeleted === true;
  const status = result.succeeded ? "SUCCEEDED" : final ? "FAILED" : "PENDING";
  const wait = delayOverride ?? deps.retryDelaysSeconds[attempt - 1] ?? deps.retryDelaysSeconds.at(-1) ?? 0;
  // The wait runs from this attempt's own answer, not from when its group of outcomes is recorded.
  const finishedAt = result.finishedAt ?? now;
  const nextAttemptAt = final ? null : new Date(finishedAt.getTime() + wait * 1000);
  /** The next attempt's message delay from now. */
  const delay = nextAttemptAt ? Math.max(0, Math.ceil((nextAttemptAt.getTime() - now.getTime()) / 1000)) : 0;
  const d = loaded.delivery;
  const outcome: AttemptOutcome = {
    id: attemptId,
    finishedAt,
    durationMs: result.durationMs,
    responseStatus: result.responseStatus,
    error: result.error,
    succeeded: result.succeeded,
  };
  const advance: DeliveryAdvance = { id: d.id, status, attempt, nextAttemptAt };
  const failureEvent: unknown[] = [];
  // A failed test event is the merchant's own probe, shown on its delivery: it raises no alert. Nor does a
  // delivery that ended because the merchant deleted its endpoint: the endpoint did not fail its attempts.
  if (status === "FAILED" && !result.endpointDeleted && loaded.envelope.type !== "webhook.delivery_failed" && loaded.envelope.type !== "webhook.test") {
    const envelope: EventEnvelope = {
      id: await deterministicUuid(`webhook.delivery_failed:${d.id}`),
      type: "webhook.delivery_failed",
      // On the tenant's clock of that mode, as the tenant's other events (a sandbox clock may run ahead).
      createdAt: new Date(now.getTime() + clockOffsetFor(loaded, loaded.mode)).toISOString(),
      tenantId: d.tenantId,
      // The mode of the event whose delivery failed.
      mode: loaded.mode,
      data: {
        delivery: {
          id: d.id,
          endpointId: d.endpointId,
          endpointUrl: loaded.url,
          eventId: d.eventId,
          eventType: d.eventType,
          attempts: attempt,
          lastError: result.error,
          lastResponseStatus: result.responseStatus,
        },
      },
      program: loaded.envelope.program,
      channel: loaded.envelope.channel,
    };
    failureEvent.push(
      eventInsertIf(
        db,
        envelope,
        null,
        // Ended FAILED by its attempts, not by its endpoint's deletion while the last one was out (then no alert).
        sql`EXISTS (SELECT 1 FROM ${webhookDeliveries} WHERE ${webhookDeliveries.id} = ${d.id} AND ${webhookDeliveries.status} = 'FAILED') AND NOT EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${webhookEndpoints.id} = ${d.endpointId} AND ${webhookEndpoints.deletedAt} IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${envelope.id})`,
      ) as never,
    );
  }
  // `failed`: it wrote a `webhook.delivery_failed`, which the consumer relays at once (failedForTenant).
  return { outcome, advance, failureEvent, final, delay, failed: failureEvent.length > 0 };
}
