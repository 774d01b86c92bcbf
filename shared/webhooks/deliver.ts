import { and, eq, inArray } from "drizzle-orm";
import { chunk, IDS_PER_LIST } from "../../db/chunks.ts";
import type { Db } from "../../db/create-db.ts";
import { webhookAttempts } from "../../db/schema/webhooks.ts";
import { openSecret } from "../crypto/secret-box.ts";
import type { Clock } from "../domain/clock.ts";
import { deterministicUuid, newId } from "../domain/ids.ts";
import type { FetchLike } from "../http/fetch-like.ts";
import { isTransientError, persistently, recordPersistently } from "../http/transient-errors.ts";
import type { Logger } from "../observability/logger.ts";
import { type AttemptRecord, attemptRecord, deferralStatements, deferred, notSentSeconds, recordAttempt, recordStatements } from "./attempt-records.ts";
import { endpointHealthStatements } from "./endpoint-pause.ts";
import { claimAttemptsStatement } from "./attempt-statements.ts";
import { type Loaded, loadDeliveries, loadDelivery } from "./delivery-rows.ts";
import { type DeliveryMessage, type DeliveryQueue, MAX_ATTEMPTS } from "./messages.ts";
import { type AttemptResult, type SecretOpener, sendInSlot } from "./send-attempt.ts";
import type { SendSlots } from "./send-slots.ts";
import { deliveryLeaseMs } from "./stalled-deliveries.ts";

/**
 * Webhook deliveries from the Queue (DECISIONS.md "Webhooks"): each attempt
 * claimed before it is sent (a unique (delivery, attempt) row) and recorded
 * after, at most 3 per delivery, none twice. The request itself is
 * send-attempt.ts, its record attempt-records.ts, the recovery of lost
 * messages stalled-deliveries.ts.
 */

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
  /** How long a batch's finished attempts wait for more before their outcomes are recorded (RECORD_GATHER_MS). */
  recordGatherMs?: number;
};

/**
 * A batch's attempts are recorded as they finish: the outcomes that finished
 * within this long of the first one not yet recorded go in one D1 batch (with
 * their next attempts' messages). A batch whose requests all answer within it
 * costs one batch of records (as before, when a batch was recorded once its
 * slowest request was done); one with a slow endpoint no longer shows its other
 * attempts in flight, nor holds back their retries, until that endpoint's
 * timeout (10 s), and an invocation cut off meanwhile loses only the outcomes
 * of the last second, whose requests go out again (receivers deduplicate on
 * the event id).
 */
export const RECORD_GATHER_MS = 1_000;

/**
 * What the consumer does with the Queue message afterwards. `failedForTenant`:
 * this message ended a delivery in FAILED, so its `webhook.delivery_failed`
 * awaits relaying for that tenant.
 */
export type MessageOutcome = { ack: true; failedForTenant?: string } | { ack: false; retryInSeconds: number };
const ACK: MessageOutcome = { ack: true };

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
 * its claim released, its outcome "not yet"), the outcomes recorded as they
 * finish, a group at a time (RECORD_GATHER_MS; one group when every request
 * answers within it), each group's in one batch of two statements
 * (attempt-statements.ts) and its next attempts enqueued in one send. The same
 * rules as processDeliveryMessage (which takes the rare next attempts whose
 * claim another worker holds; messages of attempts already recorded are
 * handled here, in bulk): at most 3 attempts, each claimed before it is sent
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
  // Messages of attempts already recorded, in bulk (one at a time, 500 of them were 1,000 calls, past an invocation's
  // budget): the latest one's next attempt is scheduled again, once, in one send for all (so none is lost); the rest are done.
  const rescheduled = new Map<string, { body: DeliveryMessage; delaySeconds: number }>();
  const repeats = new Map<string, number[]>();
  for (const [i, msg] of msgs.entries()) {
    const l = loaded.get(msg.deliveryId);
    if (!l || l.delivery.status !== "PENDING") continue;
    const d = l.delivery;
    if (msg.attempt <= d.attemptCount) {
      if (msg.attempt === d.attemptCount && d.attemptCount < MAX_ATTEMPTS && !rescheduled.has(d.id)) {
        rescheduled.set(d.id, { body: { kind: "delivery", deliveryId: d.id, attempt: d.attemptCount + 1 }, delaySeconds: secondsUntil(deps, d.nextAttemptAt) });
      }
      continue;
    }
    // Not the next attempt (a message from the future): done.
    if (msg.attempt !== d.attemptCount + 1 || msg.attempt > MAX_ATTEMPTS) continue;
    // The next one again in this batch: its first copy goes now. Kept aside: should that copy not get the claim (this
    // one is the Queue's retry of the message that holds it), this one resumes it (processDeliveryMessage).
    if (taken.has(msg.deliveryId)) {
      repeats.set(msg.deliveryId, [...(repeats.get(msg.deliveryId) ?? []), i]);
      continue;
    }
    taken.add(msg.deliveryId);
    fresh.push({ i, loaded: l, attempt: msg.attempt, attemptId: await claimIdOf(msg) });
  }
  for (const part of chunk([...rescheduled.values()], 100)) await deps.queue.sendBatch(part);

  const claimed = await claimAttempts(deps, fresh);
  for (const f of fresh) if (!claimed.has(f.attemptId)) single.push(f.i, ...(repeats.get(f.loaded.delivery.id) ?? []));
  const mine = fresh.filter((f) => claimed.has(f.attemptId));
  // Each endpoint's secret opened once for the batch (a page of events mostly goes to a few endpoints).
  const opened = new Map<string, Promise<string>>();
  const secretOf: SecretOpener = (ciphertext) => {
    const secret = opened.get(ciphertext) ?? openSecret(ciphertext, deps.secretsKey);
    opened.set(ciphertext, secret);
    return secret;
  };
  for (const f of await sendAndRecordAsTheyFinish(deps, mine, secretOf)) {
    if ("seconds" in f) outcomes[f.i] = deferred(deps, f.seconds);
    else if (f.record.failed) outcomes[f.i] = { ack: true, failedForTenant: f.loaded.delivery.tenantId };
  }
  await Promise.all(single.map(async (i) => (outcomes[i] = await processDeliveryMessage(deps, msgs[i]!))));
  return outcomes;
}

type Claimed = { i: number; loaded: Loaded; attempt: number; attemptId: string };
/** A claimed attempt whose request is done (or deferred), not yet recorded. */
type Answered = Claimed & { result: AttemptResult | "deferred" | "paused" };
/** `seconds`: how long an attempt not sent goes back to the Queue for (attempt-records.ts notSentSeconds). */
type Finished = Claimed & ({ result: "deferred" | "paused"; seconds: number } | { result: AttemptResult; record: AttemptRecord });

/**
 * Sends the claimed attempts (each in its slot) and records their outcomes as
 * they finish, in groups (RECORD_GATHER_MS): one group when every request
 * answers within the window. Groups are recorded one after another; should
 * one fail to record, the rest are still awaited and recorded, then the error
 * goes to the consumer, which retries the messages (the recorded attempts are
 * then found recorded, the others sent again under their own claims).
 */
async function sendAndRecordAsTheyFinish(deps: DeliveryDeps, mine: Claimed[], secretOf: SecretOpener): Promise<Finished[]> {
  const gatherMs = deps.recordGatherMs ?? RECORD_GATHER_MS;
  const finished: Finished[] = [];
  let waiting: Answered[] = [];
  let outstanding = mine.length;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const recordings: Promise<void>[] = [];
  // Each group is recorded after the one before, whatever that one's outcome.
  let previous: Promise<void> = Promise.resolve();
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const group = waiting;
    waiting = [];
    if (group.length === 0) return;
    const recorded = previous.then(() => recordGroup(deps, group)).then((done) => void finished.push(...done));
    previous = recorded.catch(() => {});
    recordings.push(recorded);
  };
  await Promise.all(
    mine.map(async (f) => {
      const result = await sendInSlot(deps, f.loaded, f.attempt, secretOf);
      waiting.push({ ...f, result });
      outstanding -= 1;
      if (outstanding === 0) flush();
      else timer ??= setTimeout(flush, gatherMs);
    }),
  );
  flush();
  const failed = (await Promise.allSettled(recordings)).find((r) => r.status === "rejected");
  if (failed) {
    // The groups recorded before or after keep their records, among them perhaps a delivery's final failure and its
    // `webhook.delivery_failed`, which the Queue's retry finds already FAILED: their tenants go with the error.
    const tenants = finished.flatMap((f) => ("record" in f && f.record.failed ? [f.loaded.delivery.tenantId] : []));
    throw new PartlyRecordedError(failed.reason, [...new Set(tenants)]);
  }
  return finished;
}

/**
 * A batch whose outcomes were recorded in part: `cause` is why the rest were not (the consumer retries the messages,
 * and the retry skips what was recorded); `failedForTenants`, the tenants whose `webhook.delivery_failed` the recorded
 * part wrote, to relay at once as for a batch recorded whole (MessageOutcome `failedForTenant`).
 */
export class PartlyRecordedError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly failedForTenants: string[],
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "PartlyRecordedError";
  }
}

/** One group of finished attempts: their outcomes and deferrals in one D1 batch, then their next attempts' messages. */
async function recordGroup(deps: DeliveryDeps, group: Answered[]): Promise<Finished[]> {
  const { db } = deps;
  const now = deps.clock.now();
  const done: Finished[] = await Promise.all(
    group.map(async (f): Promise<Finished> => {
      if (f.result === "deferred" || f.result === "paused") return { ...f, result: f.result, seconds: notSentSeconds(deps, f.loaded, f.result) };
      return { ...f, result: f.result, record: await attemptRecord(deps, f.loaded, f.attemptId, f.attempt, f.result, now) };
    }),
  );
  const sent = done.flatMap((f) => ("record" in f ? [f] : []));
  const statements = [
    ...recordStatements(
      db,
      sent.map((f) => f.record),
      now,
    ),
    ...endpointHealthStatements(
      db,
      sent.map((f) => ({ endpointId: f.loaded.delivery.endpointId, attempt: f.attempt, result: f.result })),
      now,
      deps.timeoutMs,
    ),
    ...done.flatMap((f) => ("seconds" in f ? deferralStatements(deps, f.loaded, f.attemptId, f.attempt, f.seconds) : [])),
  ];
  // The requests went out: their outcomes are worth several tries against an overloaded database.
  if (statements.length > 0) await recordPersistently(() => db.batch(statements as [never, ...never[]]));
  const next = sent.flatMap((f) =>
    f.record.final ? [] : [{ body: { kind: "delivery" as const, deliveryId: f.loaded.delivery.id, attempt: f.attempt + 1 }, delaySeconds: f.record.delay }],
  );
  for (const part of chunk(next, 100)) await deps.queue.sendBatch(part);
  return done;
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
  if (result === "deferred" || result === "paused") {
    const seconds = notSentSeconds(deps, loaded, result);
    await recordPersistently(() => deps.db.batch(deferralStatements(deps, loaded, attemptId, attempt, seconds) as [never, ...never[]]));
    return deferred(deps, seconds);
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
  await deps.queue.send({ kind: "delivery", deliveryId, attempt }, { delaySeconds: secondsUntil(deps, at) });
}

/** Whole seconds from now until `at` (0 when it is past or unknown). */
const secondsUntil = (deps: DeliveryDeps, at: Date | null) => (at ? Math.max(0, Math.ceil((at.getTime() - deps.clock.now().getTime()) / 1000)) : 0);
