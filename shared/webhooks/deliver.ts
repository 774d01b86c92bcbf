import { and, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { chunk, IDS_PER_LIST } from "../../db/chunks.ts";
import type { Db } from "../../db/create-db.ts";
import { events, type EventEnvelope } from "../../db/schema/events.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { notifications, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";
import { openSecret } from "../crypto/secret-box.ts";
import type { Clock } from "../domain/clock.ts";
import { deterministicUuid, newId } from "../domain/ids.ts";
import { eventInsertIf } from "../events/loan-events.ts";
import { clockOffsetFor } from "../tenants/tenant-context.ts";
import type { Logger } from "../observability/logger.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { isTransientError, persistently, recordPersistently } from "../http/transient-errors.ts";
import {
  advanceDeliveriesStatement,
  type AttemptOutcome,
  claimAttemptsStatement,
  type DeliveryAdvance,
  finishAttemptsStatement,
} from "./attempt-statements.ts";
import { bundledAttempts, type DeliveryMessage, type DeliveryQueue, MAX_ATTEMPTS } from "./messages.ts";
import { type SendSlots, slotWaitMs, unlimitedSlots } from "./send-slots.ts";
import { deliveryHeaders } from "./signing.ts";

export type DeliveryDeps = {
  db: Db;
  queue: DeliveryQueue;
  clock: Clock;
  fetch: FetchLike;
  secretsKey: string;
  /** No answer within this is a failed attempt (DECISIONS.md: 10 s). */
  timeoutMs: number;
  /** Delays before attempts 2 and 3 (production 30 s, 120 s). */
  retryDelaysSeconds: number[];
  log: Logger;
  /** The invocation's requests at once and their order (send-slots.ts); none: no limit. */
  slots?: SendSlots;
};

/**
 * What the consumer does with the Queue message afterwards. `failedForTenant`:
 * this message ended a delivery in FAILED, so its `webhook.delivery_failed`
 * awaits relaying for that tenant.
 */
export type MessageOutcome = { ack: true; failedForTenant?: string } | { ack: false; retryInSeconds: number };
const ACK: MessageOutcome = { ack: true };

/**
 * An attempt's claim is a lease of the longest an attempt can take (its wait
 * for a request slot, then the delivery timeout) plus this margin: a claimed
 * attempt unfinished after it was interrupted (its worker died; its request,
 * if it went out, was aborted at the timeout), so the next attempt may go
 * without ever running in parallel with it. The same lease bounds how long a
 * message may be missing before the recovery pass re-sends it.
 */
export const LEASE_MARGIN_MS = 5_000;

/**
 * An attempt that got no request slot in time (send-slots.ts) goes back to
 * the Queue, alone, one delivery timeout later (10 s in production); its
 * claim is released and its delivery is due again then. A deferral is not an
 * attempt: the endpoint was never asked.
 */
export const deferredSeconds = (timeoutMs: number) => Math.max(1, Math.ceil(timeoutMs / 1000));

/**
 * How long a claimed attempt or a queued message may go without an outcome:
 * 30 s with the 10 s timeout (15 s for a slot, 10 s for the answer, 5 s).
 */
export const deliveryLeaseMs = (timeoutMs: number) => slotWaitMs(timeoutMs) + timeoutMs + LEASE_MARGIN_MS;

const loadColumns = {
  delivery: webhookDeliveries,
  url: webhookEndpoints.url,
  secretCiphertext: webhookEndpoints.secretCiphertext,
  endpointDeleted: webhookEndpoints.deletedAt,
  envelope: events.envelope,
  mode: events.mode,
  /** The tenant's sandbox clock offset: a `webhook.delivery_failed` is stamped on the clock of the event it is about. */
  clockOffsetMs: tenants.clockOffsetMs,
};

/** Several deliveries with their endpoint and event, in one read per 90 ids. */
async function loadDeliveries(db: Db, ids: string[]): Promise<Map<string, Loaded>> {
  const out = new Map<string, Loaded>();
  for (const part of chunk(ids, IDS_PER_LIST)) {
    const rows = await db
      .select(loadColumns)
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .innerJoin(tenants, eq(tenants.id, webhookDeliveries.tenantId))
      .where(inArray(webhookDeliveries.id, part));
    for (const row of rows) out.set(row.delivery.id, row);
  }
  return out;
}

async function loadDelivery(db: Db, deliveryId: string) {
  const [row] = await db
    .select(loadColumns)
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(tenants, eq(tenants.id, webhookDeliveries.tenantId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .limit(1);
  return row;
}

type Loaded = NonNullable<Awaited<ReturnType<typeof loadDelivery>>>;
/** `endpointDeleted`: not sent, its endpoint is deleted; the delivery ends FAILED at once, with no `webhook.delivery_failed`. */
type AttemptResult = { succeeded: boolean; responseStatus: number | null; error: string | null; durationMs: number; endpointDeleted?: true };
const ENDPOINT_DELETED: AttemptResult = { succeeded: false, responseStatus: null, error: "endpoint deleted", durationMs: 0, endpointDeleted: true };

/**
 * A request signed this long before its slot came is signed again, so its
 * `webhook-timestamp` says when it went out (receivers compare it with their
 * clock; Standard Webhooks suggests a tolerance of minutes).
 */
export const RESIGN_AFTER_MS = 5_000;

/**
 * The attempt, sent in one of the invocation's request slots (send-slots.ts;
 * the request's timeout starts once it has one), or "deferred" when none came
 * in time. A retry's endpoint failed before: it counts as slow from the start.
 * The request is signed before it asks for its slot, so a slot is held only
 * while the request is out (under load, each step inside it waits its turn
 * on the isolate's one thread).
 */
async function sendInSlot(deps: DeliveryDeps, loaded: Loaded, attempt: number, secretOf?: SecretOpener): Promise<AttemptResult | "deferred"> {
  if (loaded.endpointDeleted) return ENDPOINT_DELETED;
  const { tenantId, endpointId } = loaded.delivery;
  let request = await signedRequest(deps, loaded, attempt, secretOf);
  if ("error" in request) return request.error;
  const slot = await (deps.slots ?? unlimitedSlots).take({ tenantId, endpointId, slow: attempt > 1 });
  if (!slot) return "deferred";
  let result: AttemptResult | undefined;
  try {
    if (deps.clock.now().getTime() - request.signedAt > RESIGN_AFTER_MS) request = await signedRequest(deps, loaded, attempt, secretOf);
    result = "error" in request ? request.error : await sendOnce(deps, loaded.url, request);
    return result;
  } finally {
    slot.done({ answered: typeof result?.responseStatus === "number" });
  }
}

/**
 * A delivery's request, signed now. A secret that cannot be opened (a wrong
 * SECRETS_KEY) is a failed attempt, as a request that could not be sent is.
 */
async function signedRequest(
  deps: DeliveryDeps,
  loaded: Loaded,
  attempt: number,
  secretOf?: SecretOpener,
): Promise<{ body: string; headers: Record<string, string>; signedAt: number } | { error: AttemptResult }> {
  const signedAt = deps.clock.now().getTime();
  try {
    const secret = await (secretOf ?? ((c) => openSecret(c, deps.secretsKey)))(loaded.secretCiphertext);
    const body = JSON.stringify(loaded.envelope);
    const headers = await deliveryHeaders({
      secret,
      eventId: loaded.envelope.id,
      eventType: loaded.envelope.type,
      deliveryId: loaded.delivery.id,
      body,
      now: deps.clock.now(),
    });
    headers["x-svc-attempt"] = String(attempt);
    return { body, headers, signedAt };
  } catch (err) {
    return { error: failedToSend(err, deps.clock.now().getTime() - signedAt, deps.timeoutMs) };
  }
}

/**
 * A deferred attempt given back: its claim deleted (its request never went
 * out) and its delivery due when the re-sent message comes back, so the
 * recovery pass does not send it a second time meanwhile. Both only while
 * the delivery still waits for this attempt.
 */
function deferralStatements(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number) {
  const { db } = deps;
  const d = loaded.delivery;
  return [
    db.delete(webhookAttempts).where(and(eq(webhookAttempts.id, attemptId), isNull(webhookAttempts.finishedAt))),
    db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(deps.clock.now().getTime() + deferredSeconds(deps.timeoutMs) * 1000) })
      .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.attemptCount, attempt - 1), eq(webhookDeliveries.status, "PENDING"))),
  ];
}

const deferred = (deps: DeliveryDeps): MessageOutcome => ({ ack: false, retryInSeconds: deferredSeconds(deps.timeoutMs) });

/** An endpoint's signing secret, opened from its ciphertext. */
type SecretOpener = (ciphertext: string) => Promise<string>;

/** POSTs the signed request once. Redirects are not followed (a 3xx fails), so an endpoint cannot bounce us elsewhere. */
async function sendOnce(deps: DeliveryDeps, url: string, request: { body: string; headers: Record<string, string> }): Promise<AttemptResult> {
  const started = Date.now();
  try {
    const res = await deps.fetch(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    return { succeeded: ok, responseStatus: res.status, error: ok ? null : `HTTP ${res.status}`, durationMs: Date.now() - started };
  } catch (err) {
    return failedToSend(err, Date.now() - started, deps.timeoutMs);
  }
}

function failedToSend(err: unknown, durationMs: number, timeoutMs: number): AttemptResult {
  const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
  const error = timedOut ? `no answer within ${timeoutMs} ms` : `network error: ${err instanceof Error ? err.message : String(err)}`;
  return { succeeded: false, responseStatus: null, error: error.slice(0, 500), durationMs };
}

/**
 * Records attempt `attempt`'s outcome and the delivery's new state in one
 * batch, conditional on the delivery still being at `attempt - 1` (so a
 * duplicate recording changes nothing). The final failure also writes
 * `webhook.delivery_failed` (its id derived from the delivery, so once),
 * except about a `webhook.delivery_failed` itself, which would let two dead
 * endpoints notify each other forever.
 */
async function recordAttempt(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number, result: AttemptResult, delayOverride?: number) {
  const now = deps.clock.now();
  const record = await attemptRecord(deps, loaded, attemptId, attempt, result, now, delayOverride);
  await deps.db.batch(recordStatements(deps.db, [record], now) as [never, ...never[]]);
  return record;
}

type AttemptRecord = Awaited<ReturnType<typeof attemptRecord>>;

/**
 * The statements that record attempts' outcomes, however many: every outcome
 * in one statement, every delivery's advance in one, then the
 * `webhook.delivery_failed` of each delivery that ended FAILED (each
 * conditional on its delivery having ended so: after the advance).
 */
function recordStatements(db: Db, records: AttemptRecord[], now: Date) {
  if (records.length === 0) return [];
  return [
    finishAttemptsStatement(
      db,
      records.map((r) => r.outcome),
      now,
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
async function attemptRecord(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number, result: AttemptResult, now: Date, delayOverride?: number) {
  const { db } = deps;
  // An attempt for a deleted endpoint (one claimed as it was deleted: deleteEndpoint ends the others) is the last.
  const final = result.succeeded || attempt >= MAX_ATTEMPTS || result.endpointDeleted === true;
  const status = result.succeeded ? "SUCCEEDED" : final ? "FAILED" : "PENDING";
  const delay = delayOverride ?? deps.retryDelaysSeconds[attempt - 1] ?? deps.retryDelaysSeconds.at(-1) ?? 0;
  const nextAttemptAt = final ? null : new Date(now.getTime() + delay * 1000);
  const d = loaded.delivery;
  const outcome: AttemptOutcome = {
    id: attemptId,
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
        sql`EXISTS (SELECT 1 FROM ${webhookDeliveries} WHERE ${webhookDeliveries.id} = ${d.id} AND ${webhookDeliveries.status} = 'FAILED') AND NOT EXISTS (SELECT 1 FROM ${events} WHERE ${events.id} = ${envelope.id})`,
      ) as never,
    );
  }
  // `failed`: it wrote a `webhook.delivery_failed`, which the consumer relays at once (failedForTenant).
  return { outcome, advance, failureEvent, final, delay, failed: failureEvent.length > 0 };
}

/**
 * A delivery message as the consumer hands it over. `messageId` is the Queue
 * message's id, the same on each of its Queue retries: the attempt's claim id
 * is derived from it, so a retry of the message that claimed an attempt (its
 * bookkeeping hit an overloaded database before the outcome was recorded)
 * finds the claim its own and carries on with the same attempt instead of
 * waiting out the lease and counting it as one of the 3.
 */
type DeliveryRequest = { deliveryId: string; attempt: number; messageId?: string };

/** The claim id of a message's attempt: derived from the Queue message when there is one, random otherwise. */
const claimIdOf = (msg: DeliveryRequest) =>
  msg.messageId ? deterministicUuid(`webhook-attempt:${msg.messageId}:${msg.deliveryId}:${msg.attempt}`) : Promise.resolve(newId());

/**
 * A Queue batch of delivery messages at the cost of a few D1 round trips
 * instead of a few per message: the deliveries in one read, every next
 * attempt claimed in one statement, the requests sent concurrently (in the
 * invocation's slots, send-slots.ts; one that gets none in time is deferred:
 * its claim released, its outcome "not yet"), every outcome recorded in one
 * batch of two statements (attempt-statements.ts) and the next attempts
 * enqueued in one send. The same
 * rules as processDeliveryMessage (which takes the rare messages that are not
 * a delivery's next attempt, or repeat one in this batch, or whose claim
 * another worker holds): at most 3 attempts, each claimed before it is sent
 * and recorded after, none twice.
 */
export async function processDeliveryBatch(deps: DeliveryDeps, msgs: DeliveryRequest[]): Promise<MessageOutcome[]> {
  if (msgs.length <= 1) return Promise.all(msgs.map((m) => processDeliveryMessage(deps, m)));
  const { db } = deps;
  const loaded = await loadDeliveries(db, [...new Set(msgs.map((m) => m.deliveryId))]);
  const outcomes: MessageOutcome[] = msgs.map(() => ACK);
  const single: number[] = [];
  const fresh: { i: number; loaded: Loaded; attempt: number; attemptId: string }[] = [];
  const taken = new Set<string>();
  for (const [i, msg] of msgs.entries()) {
    const l = loaded.get(msg.deliveryId);
    if (!l || l.delivery.status !== "PENDING") continue;
    if (msg.attempt !== l.delivery.attemptCount + 1 || msg.attempt > MAX_ATTEMPTS || taken.has(msg.deliveryId)) {
      single.push(i);
      continue;
    }
    taken.add(msg.deliveryId);
    fresh.push({ i, loaded: l, attempt: msg.attempt, attemptId: await claimIdOf(msg) });
  }

  const claimed = await claimAttempts(deps, fresh);
  for (const f of fresh) if (!claimed.has(f.attemptId)) single.push(f.i);
  const mine = fresh.filter((f) => claimed.has(f.attemptId));
  // Each endpoint's secret opened once for the batch (a page of events mostly goes to a few endpoints).
  const opened = new Map<string, Promise<string>>();
  const secretOf: SecretOpener = (ciphertext) => {
    const secret = opened.get(ciphertext) ?? openSecret(ciphertext, deps.secretsKey);
    opened.set(ciphertext, secret);
    return secret;
  };
  const results = await Promise.all(mine.map((f) => sendInSlot(deps, f.loaded, f.attempt, secretOf)));
  const sent = mine.flatMap((f, k) => (results[k] === "deferred" ? [] : [{ ...f, result: results[k] as AttemptResult }]));
  const postponed = mine.filter((_, k) => results[k] === "deferred");
  const now = deps.clock.now();
  const records = await Promise.all(sent.map((f) => attemptRecord(deps, f.loaded, f.attemptId, f.attempt, f.result, now)));
  const statements = [...recordStatements(db, records, now), ...postponed.flatMap((f) => deferralStatements(deps, f.loaded, f.attemptId, f.attempt))];
  // The requests went out: their outcomes are worth several tries against an overloaded database.
  if (statements.length > 0) await recordPersistently(() => db.batch(statements as [never, ...never[]]));
  const next = sent.flatMap((f, k) =>
    records[k]!.final
      ? []
      : [{ body: { kind: "delivery" as const, deliveryId: f.loaded.delivery.id, attempt: f.attempt + 1 }, delaySeconds: records[k]!.delay }],
  );
  for (const part of chunk(next, 100)) await deps.queue.sendBatch(part);
  sent.forEach((f, k) => {
    if (records[k]!.failed) outcomes[f.i] = { ack: true, failedForTenant: f.loaded.delivery.tenantId };
  });
  for (const f of postponed) outcomes[f.i] = deferred(deps);
  await Promise.all(single.map(async (i) => (outcomes[i] = await processDeliveryMessage(deps, msgs[i]!))));
  return outcomes;
}

/**
 * Claims each attempt (the unique (delivery, attempt) row) in one statement;
 * returns the ids of the claims that are ours. A transient error may hide a
 * statement that committed: the claims are read back.
 */
async function claimAttempts(deps: DeliveryDeps, fresh: { loaded: Loaded; attempt: number; attemptId: string }[]): Promise<Set<string>> {
  if (fresh.length === 0) return new Set();
  const { db } = deps;
  const now = deps.clock.now();
  try {
    const claims = fresh.map((f) => ({ id: f.attemptId, tenantId: f.loaded.delivery.tenantId, deliveryId: f.loaded.delivery.id, attempt: f.attempt }));
    const [inserted] = (await db.batch([claimAttemptsStatement(db, claims, now)] as [never])) as [{ id: string }[]];
    return new Set(inserted.map((r) => r.id));
  } catch (err) {
    if (!isTransientError(err)) throw err;
    const ids = fresh.map((f) => f.attemptId);
    const rows = await persistently(async () => {
      const found: { id: string }[] = [];
      for (const part of chunk(ids, IDS_PER_LIST))
        found.push(...(await db.select({ id: webhookAttempts.id }).from(webhookAttempts).where(inArray(webhookAttempts.id, part))));
      return found;
    });
    return new Set(rows.map((r) => r.id));
  }
}

/**
 * One delivery attempt from the Queue (DECISIONS.md "Webhooks"): at most 3
 * attempts per delivery, each recorded in the database before the next is
 * scheduled. Duplicate or stale messages are recognized by the delivery's
 * recorded attempt count and the unique (delivery, attempt) claim, so they
 * never cause an extra attempt; a message for an attempt already recorded
 * makes sure the next one is scheduled, so none is lost either.
 */
export async function processDeliveryMessage(deps: DeliveryDeps, msg: DeliveryRequest): Promise<MessageOutcome> {
  const { db } = deps;
  const loaded = await loadDelivery(db, msg.deliveryId);
  if (!loaded || loaded.delivery.status !== "PENDING") return ACK;
  const d = loaded.delivery;

  if (msg.attempt <= d.attemptCount) {
    // Already recorded. If it was the latest and the delivery goes on, (re)schedule the next one.
    if (msg.attempt === d.attemptCount) await scheduleNext(deps, d.id, d.attemptCount + 1, d.nextAttemptAt);
    return ACK;
  }
  if (msg.attempt !== d.attemptCount + 1 || msg.attempt > MAX_ATTEMPTS) return ACK;

  const attemptId = await claimIdOf(msg);
  if (!(await claimAttempt(deps, d, attemptId, msg.attempt))) return resumeClaimed(deps, loaded, msg.attempt, attemptId);
  return sendAndRecord(deps, loaded, attemptId, msg.attempt);
}

/** Sends a claimed attempt and records its outcome; schedules the next attempt if there is one. */
async function sendAndRecord(deps: DeliveryDeps, loaded: Loaded, attemptId: string, attempt: number): Promise<MessageOutcome> {
  const d = loaded.delivery;
  const result = await sendInSlot(deps, loaded, attempt);
  if (result === "deferred") {
    await recordPersistently(() => deps.db.batch(deferralStatements(deps, loaded, attemptId, attempt) as [never, ...never[]]));
    return deferred(deps);
  }
  // The request went out: its outcome is worth several tries against an overloaded database.
  const { final, delay, failed } = await recordPersistently(() => recordAttempt(deps, loaded, attemptId, attempt, result));
  if (!final) await deps.queue.send({ kind: "delivery", deliveryId: d.id, attempt: attempt + 1 }, { delaySeconds: delay });
  return failed ? { ack: true, failedForTenant: d.tenantId } : ACK;
}

/**
 * Claims attempt `attempt` (the unique (delivery, attempt) row). A transient
 * error may hide a claim that committed: the row is read back, and it is ours
 * if it carries our id; if there is none, the error stands.
 */
async function claimAttempt(deps: DeliveryDeps, d: Loaded["delivery"], attemptId: string, attempt: number): Promise<boolean> {
  try {
    const claim = { id: attemptId, tenantId: d.tenantId, deliveryId: d.id, attempt };
    const [claimed] = (await deps.db.batch([claimAttemptsStatement(deps.db, [claim], deps.clock.now())] as [never])) as [{ id: string }[]];
    return claimed.length > 0;
  } catch (err) {
    if (!isTransientError(err)) throw err;
    const [row] = await persistently(() =>
      deps.db
        .select({ id: webhookAttempts.id })
        .from(webhookAttempts)
        .where(and(eq(webhookAttempts.deliveryId, d.id), eq(webhookAttempts.attempt, attempt))),
    );
    // No claim at all: the insert never ran. The consumer retries the message (rather than drop it).
    if (!row) throw err;
    return row.id === attemptId;
  }
}

// An outcome's record goes through `recordPersistently` (shared/http/transient-errors.ts). Should
// all its tries fail, the error goes to the consumer, which retries the Queue message with a
// backoff; that retry finds the claim its own (claimIdOf) and sends the same attempt again, so
// the outage costs the endpoint a duplicate (receivers deduplicate on the event id), never one
// of the delivery's 3 attempts.

/**
 * This attempt's claim is taken. If by an earlier try of this same Queue
 * message (its bookkeeping failed before the outcome was recorded, and the
 * Queue retried it), the attempt is ours: send it. If by another message,
 * wait for it, or, if its worker died, count it as failed.
 */
async function resumeClaimed(deps: DeliveryDeps, loaded: Loaded, attempt: number, attemptId: string): Promise<MessageOutcome> {
  const [claim] = await deps.db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.deliveryId, loaded.delivery.id), eq(webhookAttempts.attempt, attempt)));
  if (!claim || claim.finishedAt) return ACK;
  if (claim.id === attemptId) return sendAndRecord(deps, loaded, attemptId, attempt);
  const age = deps.clock.now().getTime() - claim.startedAt.getTime();
  const lease = deliveryLeaseMs(deps.timeoutMs);
  if (age < lease) return { ack: false, retryInSeconds: Math.max(1, Math.ceil((lease - age) / 1000)) };
  // The request may or may not have gone out; counting it keeps "3 attempts" true either way.
  // The interruption was ours, not the endpoint's: the next attempt goes at once.
  const { final, delay, failed } = await recordAttempt(
    deps,
    loaded,
    claim.id,
    attempt,
    { succeeded: false, responseStatus: null, error: "interrupted before its outcome was recorded", durationMs: age },
    0,
  );
  if (!final) await deps.queue.send({ kind: "delivery", deliveryId: loaded.delivery.id, attempt: attempt + 1 }, { delaySeconds: delay });
  return failed ? { ack: true, failedForTenant: loaded.delivery.tenantId } : ACK;
}

async function scheduleNext(deps: DeliveryDeps, deliveryId: string, attempt: number, at: Date | null) {
  if (attempt > MAX_ATTEMPTS) return;
  const delaySeconds = at ? Math.max(0, Math.ceil((at.getTime() - deps.clock.now().getTime()) / 1000)) : 0;
  await deps.queue.send({ kind: "delivery", deliveryId, attempt }, { delaySeconds });
}

/** Stalled work re-sent per recovery pass, at most. */
export const RECOVERY_PAGE = 100;

/**
 * Takes up to RECOVERY_PAGE PENDING deliveries due before `cutoff`, renewing
 * their lease to `now`. They are found through the partial
 * `webhook_deliveries_pending_idx`, which holds PENDING deliveries only.
 */
export function requeueDeliveriesQuery(db: Db, now: Date, cutoff: Date) {
  const stalled = and(eq(webhookDeliveries.status, "PENDING"), lt(webhookDeliveries.nextAttemptAt, cutoff));
  return db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(and(inArray(webhookDeliveries.id, db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(stalled).limit(RECOVERY_PAGE)), stalled))
    .returning({ id: webhookDeliveries.id, attemptCount: webhookDeliveries.attemptCount });
}

/** The same for owner e-mails, through the partial `notifications_email_pending_idx`. */
export function requeueMailsQuery(db: Db, now: Date, cutoff: Date) {
  const stalled = and(eq(notifications.emailStatus, "PENDING"), lt(notifications.emailNextAttemptAt, cutoff));
  return db
    .update(notifications)
    .set({ emailNextAttemptAt: now })
    .where(and(inArray(notifications.id, db.select({ id: notifications.id }).from(notifications).where(stalled).limit(RECOVERY_PAGE)), stalled))
    .returning({ id: notifications.id });
}

/**
 * The recovery pass (every cron tick): work whose Queue message was lost (a
 * relay or a worker cut off, a message dropped, the process killed) is
 * enqueued again once its lease has run out: deliveries whose next attempt is
 * overdue by more than `leaseMs`, and owner e-mails likewise. Each is taken
 * with a conditional update that renews its lease (`next_attempt_at` = now),
 * so overlapping passes send one message each, and a delivery is re-sent at
 * most once per lease. A re-sent attempt whose claim is still held waits for
 * it, and one whose claim outlived its lease counts as interrupted: no
 * attempt ever runs twice, or twice at once. Duplicates are harmless.
 */
export async function requeueStalledDeliveries(deps: Pick<DeliveryDeps, "db" | "queue" | "clock">, leaseMs = deliveryLeaseMs(10_000)) {
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - leaseMs);
  const [stalled, mails] = await Promise.all([requeueDeliveriesQuery(deps.db, now, cutoff), requeueMailsQuery(deps.db, now, cutoff)]);
  const messages: { body: DeliveryMessage }[] = [
    ...bundledAttempts(stalled.map((s) => ({ kind: "delivery" as const, deliveryId: s.id, attempt: s.attemptCount + 1 }))),
    ...mails.map((n) => ({ body: { kind: "email" as const, notificationId: n.id } })),
  ];
  for (let i = 0; i < messages.length; i += 100) await deps.queue.sendBatch(messages.slice(i, i + 100));
  return stalled.length + mails.length;
}
