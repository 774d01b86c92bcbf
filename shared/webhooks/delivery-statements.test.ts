import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { webhookAttempts, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { createTestDb } from "../../db/test-db.ts";
import { advanceDeliveryStatement, claimAttemptStatement, finishAttemptStatement } from "./deliver.ts";
import { builtQuery, preparedQuery } from "../../db/statement-text.ts";

let t: Awaited<ReturnType<typeof createTestDb>>;
let db: Db;
beforeAll(async () => {
  t = await createTestDb();
  db = t.db;
});
afterAll(() => t.close());

const at = new Date("2026-11-23T08:00:00.123Z");
const id = "5b0e1c0a-6f7d-4c1e-9a3b-2f1d0c9e8a7b";

describe("an attempt's bookkeeping, built once: the SQL and binds drizzle would build each time", () => {
  test("the claim", () => {
    const values = { id, tenantId: "t-1", deliveryId: "d-1", attempt: 2, startedAt: at };
    expect(preparedQuery(claimAttemptStatement(db, values))).toEqual(
      builtQuery(db.insert(webhookAttempts).values(values).onConflictDoNothing().returning({ id: webhookAttempts.id })),
    );
  });

  test("the outcome, a success and a failure with no answer (nulls bind NULL)", () => {
    for (const outcome of [
      { durationMs: 120, responseStatus: 204, error: null, succeeded: true },
      { durationMs: 10_000, responseStatus: null, error: "timed out after 10000 ms", succeeded: false },
    ]) {
      const drizzle = builtQuery(
        db
          .update(webhookAttempts)
          .set({ finishedAt: at, ...outcome })
          .where(and(eq(webhookAttempts.id, id), isNull(webhookAttempts.finishedAt))),
      );
      const prepared = preparedQuery(finishAttemptStatement(db, { id, finishedAt: at, ...outcome }));
      expect(prepared.params).toEqual([at.getTime(), outcome.durationMs, outcome.responseStatus, outcome.error, outcome.succeeded ? 1 : 0, id]);
      expect(prepared).toEqual(drizzle);
    }
  });

  test("the delivery's advance, to the next attempt and to the end (no next attempt: NULL)", () => {
    for (const next of [
      { status: "PENDING" as const, nextAttemptAt: new Date(at.getTime() + 30_000) },
      { status: "FAILED" as const, nextAttemptAt: null },
    ]) {
      const prepared = preparedQuery(advanceDeliveryStatement(db, { id, attemptCount: 2, previousCount: 1, updatedAt: at, ...next }));
      expect(prepared.params).toEqual([next.status, 2, next.nextAttemptAt?.getTime() ?? null, at.getTime(), id, 1, "PENDING"]);
      expect(prepared).toEqual(
        builtQuery(
          db
            .update(webhookDeliveries)
            .set({ status: next.status, attemptCount: 2, nextAttemptAt: next.nextAttemptAt, updatedAt: at })
            .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.attemptCount, 1), eq(webhookDeliveries.status, "PENDING"))),
        ),
      );
    }
  });
});
