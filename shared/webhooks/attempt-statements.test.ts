import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { webhookAttempts, webhookDeliveries } from "../../db/schema/webhooks.ts";
import { newId } from "../domain/ids.ts";
import { createKey, createSandboxLoan, insertWebhookEndpoint, signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { advanceDeliveriesStatement, claimAttemptsStatement, finishAttemptsStatement } from "./attempt-statements.ts";

// A part's attempt bookkeeping in three statements whatever its size (rows as one JSON parameter):
// each row keeps the condition it had as a statement of its own, and is stored as drizzle stores it.

let t: TestApp;
let tenantId: string;
let deliveryIds: string[];
beforeAll(async () => {
  t = await createTestApp();
  const owner = await signUpTenant(t);
  tenantId = owner.tenantId;
  const { key } = await createKey(t, owner.token);
  // Three endpoints: each of the loan's three events makes three deliveries.
  for (const n of [1, 2, 3]) await insertWebhookEndpoint(t, tenantId, `https://hooks.merchant.example/${n}`);
  await createSandboxLoan(t, key);
  deliveryIds = (await t.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, tenantId))).map((d) => d.id);
  expect(deliveryIds.length).toBe(9);
});
afterAll(() => t.close());

const at = new Date("2026-11-23T08:00:00.123Z");
const run = async <T>(item: unknown) => ((await t.db.batch([item] as [never])) as [T])[0];
const attemptsOf = (ids: string[]) => t.db.select().from(webhookAttempts).where(inArray(webhookAttempts.id, ids));
const deliveriesOf = (ids: string[]) => t.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, ids));

describe("the claims: one statement inserts every attempt nobody claimed yet", () => {
  test("new claims are inserted and returned; a taken (delivery, attempt) or id is not", async () => {
    const [a, b, c] = deliveryIds as [string, string, string];
    const first = [
      { id: newId(), tenantId, deliveryId: a, attempt: 1 },
      { id: newId(), tenantId, deliveryId: b, attempt: 1 },
    ];
    const inserted = await run<{ id: string }[]>(claimAttemptsStatement(t.db, first, at));
    expect(inserted.map((r) => r.id).sort()).toEqual(first.map((r) => r.id).sort());
    const stored = await attemptsOf(first.map((r) => r.id));
    for (const row of stored) {
      const claim = first.find((r) => r.id === row.id)!;
      expect(row).toEqual({
        ...claim,
        startedAt: at,
        finishedAt: null,
        durationMs: null,
        responseStatus: null,
        error: null,
        succeeded: null,
      });
    }

    // Another message's claim of a's attempt 1 (another id), a repeat of b's own claim, and c's new one.
    const second = [{ id: newId(), tenantId, deliveryId: a, attempt: 1 }, first[1]!, { id: newId(), tenantId, deliveryId: c, attempt: 1 }];
    const again = await run<{ id: string }[]>(claimAttemptsStatement(t.db, second, new Date(at.getTime() + 1_000)));
    expect(again.map((r) => r.id)).toEqual([second[2]!.id]);
    expect(await attemptsOf([second[0]!.id])).toEqual([]);
    // b's claim keeps its first start.
    expect((await attemptsOf([first[1]!.id]))[0]!.startedAt).toEqual(at);
  });
});

describe("the outcomes: one statement finishes every claim that is still unfinished", () => {
  test("a success and a failure with no answer are stored as drizzle stores them; a second outcome changes nothing", async () => {
    const [, , , d, e] = deliveryIds as string[];
    const claims = [
      { id: newId(), tenantId, deliveryId: d!, attempt: 1 },
      { id: newId(), tenantId, deliveryId: e!, attempt: 1 },
    ];
    await run(claimAttemptsStatement(t.db, claims, at));
    // Recorded together, each keeps its own finish: the quick answer's is not the slow one's.
    const outcomes = [
      { id: claims[0]!.id, finishedAt: new Date(at.getTime() + 120), durationMs: 120, responseStatus: 204, error: null, succeeded: true },
      {
        id: claims[1]!.id,
        finishedAt: new Date(at.getTime() + 10_000),
        durationMs: 10_000,
        responseStatus: null,
        error: "no answer within 10000 ms, 'quoted' \"too\"",
        succeeded: false,
      },
    ];
    await run(finishAttemptsStatement(t.db, outcomes));
    const stored = await attemptsOf(claims.map((c) => c.id));
    for (const row of stored) {
      const { id, ...outcome } = outcomes.find((o) => o.id === row.id)!;
      expect(row).toMatchObject({ ...outcome, startedAt: at });
      expect(typeof row.succeeded).toBe("boolean");
    }

    // A late duplicate outcome (another try of the same record) leaves the first.
    await run(
      finishAttemptsStatement(
        t.db,
        outcomes.map((o) => ({ ...o, finishedAt: new Date(at.getTime() + 19_000), durationMs: 1, responseStatus: 500, error: "late", succeeded: false })),
      ),
    );
    expect((await attemptsOf(claims.map((c) => c.id))).sort((x, y) => x.id.localeCompare(y.id))).toEqual(stored.sort((x, y) => x.id.localeCompare(y.id)));
  });
});

describe("the advance: one statement moves every delivery still PENDING after the attempt before", () => {
  test("to the next attempt, to SUCCEEDED and to FAILED; stale and repeated advances change nothing", async () => {
    const [, , , , , f, g, h] = deliveryIds as string[];
    const updatedAt = new Date(at.getTime() + 2_000);
    const next = new Date(at.getTime() + 30_000);
    await run(
      advanceDeliveriesStatement(
        t.db,
        [
          { id: f!, status: "PENDING", attempt: 1, nextAttemptAt: next },
          { id: g!, status: "SUCCEEDED", attempt: 1, nextAttemptAt: null },
          // Stale: h is at attempt 0, so attempt 3 (after 2) does not apply.
          { id: h!, status: "FAILED", attempt: 3, nextAttemptAt: null },
        ],
        updatedAt,
      ),
    );
    const byId = new Map((await deliveriesOf([f!, g!, h!])).map((d) => [d.id, d]));
    expect(byId.get(f!)).toMatchObject({ status: "PENDING", attemptCount: 1, nextAttemptAt: next, updatedAt });
    expect(byId.get(g!)).toMatchObject({ status: "SUCCEEDED", attemptCount: 1, nextAttemptAt: null, updatedAt });
    expect(byId.get(h!)).toMatchObject({ status: "PENDING", attemptCount: 0 });
    expect(byId.get(h!)!.updatedAt).not.toEqual(updatedAt);

    // f's attempt 2 fails for good; g is no longer PENDING, so a repeat of its attempt 1 (or a 2) changes nothing.
    const later = new Date(at.getTime() + 40_000);
    await run(
      advanceDeliveriesStatement(
        t.db,
        [
          { id: f!, status: "FAILED", attempt: 2, nextAttemptAt: null },
          { id: g!, status: "PENDING", attempt: 1, nextAttemptAt: next },
          { id: g!, status: "FAILED", attempt: 2, nextAttemptAt: null },
        ],
        later,
      ),
    );
    const after = new Map((await deliveriesOf([f!, g!])).map((d) => [d.id, d]));
    expect(after.get(f!)).toMatchObject({ status: "FAILED", attemptCount: 2, nextAttemptAt: null, updatedAt: later });
    expect(after.get(g!)).toMatchObject({ status: "SUCCEEDED", attemptCount: 1, nextAttemptAt: null, updatedAt });
  });

  test("more rows than D1's 100 bound parameters would allow as statements of their own: 150 claims and outcomes, one statement each", async () => {
    const [original] = await deliveriesOf([deliveryIds[8]!]);
    // 50 redeliveries of one delivery, 3 attempts each.
    const copies = Array.from({ length: 50 }, () => ({ ...original!, id: newId(), redeliveryOf: original!.id }));
    await t.db.insert(webhookDeliveries).values(copies.slice(0, 25));
    await t.db.insert(webhookDeliveries).values(copies.slice(25));
    const claims = copies.flatMap((d) => [1, 2, 3].map((attempt) => ({ id: newId(), tenantId, deliveryId: d.id, attempt })));
    const inserted = await run<{ id: string }[]>(claimAttemptsStatement(t.db, claims, at));
    expect(inserted.length).toBe(150);
    await run(
      finishAttemptsStatement(
        t.db,
        claims.map((c, n) => ({ id: c.id, finishedAt: at, durationMs: n, responseStatus: 200, error: null, succeeded: true })),
      ),
    );
    const stored = new Map((await attemptsOf(claims.map((c) => c.id))).map((r) => [r.id, r]));
    expect(claims.filter((c, n) => stored.get(c.id)?.durationMs === n && stored.get(c.id)?.finishedAt?.getTime() === at.getTime()).length).toBe(150);
  });
});
