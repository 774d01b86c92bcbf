import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { jsonField, jsonRows, selectJsonRows } from "../../db/json-rows.ts";
import { preparedStatement } from "../../db/prepared-statements.ts";
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema/webhooks.ts";

/**
 * The bookkeeping of delivery attempts as three statements whatever their
 * number: the claims, the outcomes, the deliveries' advance. Each statement
 * takes its rows as one JSON parameter, read with `json_each`, so a part of
 * 50 attempts costs three statements instead of 150 (and no statement meets
 * D1's 100 bound parameters). Every row keeps the condition its statement
 * had when it was one per attempt: a claim only where no attempt of that
 * (delivery, attempt) or id exists, an outcome only on an unfinished claim,
 * an advance only while the delivery is PENDING after attempt - 1.
 *
 * Values are stored as the columns' own encoders store them: timestamps as
 * epoch milliseconds, booleans as 0/1, nulls as NULL
 * (`attempt-statements.test.ts` reads them back through drizzle).
 * Each statement is built once per database (db/prepared-statements.ts).
 */

/** One attempt to claim: its id (the claim's), tenant, delivery and number. */
export type AttemptClaim = { id: string; tenantId: string; deliveryId: string; attempt: number };

/** One attempt's outcome, on its claim: `finishedAt` when its answer came (attempts recorded together keep their own). */
export type AttemptOutcome = { id: string; finishedAt: Date; durationMs: number; responseStatus: number | null; error: string | null; succeeded: boolean };

/** One delivery after attempt `attempt`: its status then, and when its next attempt is due (none: null). */
export type DeliveryAdvance = { id: string; status: "PENDING" | "SUCCEEDED" | "FAILED"; attempt: number; nextAttemptAt: Date | null };

/** Claims (inserts) the attempts that nobody claimed yet; returns the ids of those it inserted. */
const claimsStatement = preparedStatement<{ rows: string }>((db, p) =>
  db
    .insert(webhookAttempts)
    .select(selectJsonRows(webhookAttempts, p("rows")))
    .onConflictDoNothing()
    .returning({ id: webhookAttempts.id }),
);

export const claimAttemptsStatement = (db: Db, rows: AttemptClaim[], startedAt: Date) =>
  claimsStatement(db, {
    rows: jsonRows(
      webhookAttempts,
      rows.map((r) => ({ ...r, startedAt })),
    ),
  });

/** The outcomes, each on its claim if still unfinished. */
const outcomesStatement = preparedStatement<{ rows: string }>((db, p) =>
  db
    .update(webhookAttempts)
    .set({
      finishedAt: sql`r.finished_at`,
      durationMs: sql`r.duration_ms`,
      responseStatus: sql`r.response_status`,
      error: sql`r.error`,
      succeeded: sql`r.succeeded`,
    })
    .from(
      sql`(SELECT ${jsonField("id")} AS id, ${jsonField("finishedAt")} AS finished_at, ${jsonField("durationMs")} AS duration_ms, ${jsonField("responseStatus")} AS response_status, ${jsonField("error")} AS error, ${jsonField("succeeded")} AS succeeded FROM json_each(${p("rows")}) AS j) AS r`,
    )
    .where(and(eq(webhookAttempts.id, sql`r.id`), isNull(webhookAttempts.finishedAt))),
);

export const finishAttemptsStatement = (db: Db, rows: AttemptOutcome[]) =>
  outcomesStatement(db, { rows: JSON.stringify(rows.map((r) => ({ ...r, finishedAt: r.finishedAt.getTime(), succeeded: r.succeeded ? 1 : 0 }))) });

/**
 * The deliveries' advance, each only if it is still PENDING after the attempt
 * before. A delivery its endpoint's deletion ended (FAILED, still at the
 * attempt before) counts the attempt that was already out and stays FAILED,
 * so its history does not show an attempt it does not count.
 */
const advanceStatement = preparedStatement<{ rows: string; updatedAt: Date }>((db, p) => {
  const pending = sql`${webhookDeliveries.status} = 'PENDING'`;
  return db
    .update(webhookDeliveries)
    .set({
      status: sql`CASE WHEN ${pending} THEN r.status ELSE ${webhookDeliveries.status} END`,
      attemptCount: sql`r.attempt`,
      nextAttemptAt: sql`CASE WHEN ${pending} THEN r.next_attempt_at ELSE NULL END`,
      updatedAt: p("updatedAt"),
    })
    .from(
      sql`(SELECT ${jsonField("id")} AS id, ${jsonField("status")} AS status, ${jsonField("attempt")} AS attempt, ${jsonField("nextAttemptAt")} AS next_attempt_at FROM json_each(${p("rows")}) AS j) AS r`,
    )
    .where(
      and(
        eq(webhookDeliveries.id, sql`r.id`),
        eq(webhookDeliveries.attemptCount, sql`r.attempt - 1`),
        sql`(${pending} OR (${webhookDeliveries.status} = 'FAILED' AND EXISTS (SELECT 1 FROM ${webhookEndpoints} WHERE ${webhookEndpoints.id} = ${webhookDeliveries.endpointId} AND ${webhookEndpoints.deletedAt} IS NOT NULL)))`,
      ),
    );
});

export const advanceDeliveriesStatement = (db: Db, rows: DeliveryAdvance[], updatedAt: Date) =>
  advanceStatement(db, { rows: JSON.stringify(rows.map((r) => ({ ...r, nextAttemptAt: r.nextAttemptAt?.getTime() ?? null }))), updatedAt });
