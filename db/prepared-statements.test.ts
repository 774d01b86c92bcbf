import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import type { Db } from "./create-db.ts";
import { insertIf } from "./guarded-writes.ts";
import { placeholderRow, preparedStatement } from "./prepared-statements.ts";
import { events, type EventEnvelope } from "./schema/events.ts";
import { settlements } from "./schema/loan-records.ts";
import { createTestDb } from "./test-db.ts";
import { builtQuery, preparedQuery } from "./statement-text.ts";

let t: Awaited<ReturnType<typeof createTestDb>>;
let db: Db;
beforeAll(async () => {
  t = await createTestDb();
  db = t.db;
  // The rows here belong to no tenant or loan: these tests are about statements, not references.
  await t.client.execute("PRAGMA foreign_keys = OFF");
});
afterAll(() => t.close());

const settlementRow = () => ({
  id: crypto.randomUUID(),
  tenantId: crypto.randomUUID(),
  loanId: crypto.randomUUID(),
  kind: "FUNDING" as const,
  status: "CONFIRMED" as const,
  amount: 123_450_000n,
  chain: "POLYGON_AMOY" as const,
  mode: "sandbox" as const,
  asset: "USDC" as const,
  txHash: `0x${"ab".repeat(32)}`,
  fromAddress: null,
  toAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
  blockNumber: 42,
  logIndex: null,
  paidAt: new Date("2026-11-23T05:00:00.123Z"),
  createdAt: new Date("2026-11-23T05:00:01.456Z"),
});

const settlementInsert = preparedStatement<ReturnType<typeof settlementRow> & { ok: number }>((d, p) =>
  insertIf(d, settlements, placeholderRow(settlements, p), sql`1 = ${p("ok")}`),
);

test("bigint units, enums, timestamps and nulls bind what drizzle binds, nulls as NULL; the second call fills the first one's SQL", () => {
  for (let i = 0; i < 2; i++) {
    const row = settlementRow();
    const prepared = preparedQuery(settlementInsert(db, { ...row, ok: 1 }));
    const plain = builtQuery(insertIf(db, settlements, row, sql`1 = ${1}`));
    // drizzle writes a null value as a literal NULL; the prepared statement binds it. The rest: the same values, encoded alike.
    expect(prepared.params.filter((v) => v !== null) as unknown[]).toEqual(plain.params);
    expect(prepared.params.filter((v) => v === null)).toHaveLength(2);
    expect(plain.params).toContain(123_450_000);
    expect(plain.params).toContain(row.paidAt.getTime());
  }
});

test("the insert holds only when its condition does, and stores the row as given", async () => {
  const row = settlementRow();
  await db.batch([settlementInsert(db, { ...row, ok: 0 })]);
  expect(await db.select().from(settlements).where(eq(settlements.id, row.id))).toHaveLength(0);
  await db.batch([settlementInsert(db, { ...row, ok: 1 })]);
  expect(await db.select().from(settlements).where(eq(settlements.id, row.id))).toEqual([row]);
});

test("a JSON column round-trips through its encoder", async () => {
  const envelope: EventEnvelope = {
    id: crypto.randomUUID(),
    type: "loan.funded",
    createdAt: "2026-11-23T05:00:00.000Z",
    tenantId: crypto.randomUUID(),
    mode: "sandbox",
    data: { loan: { id: "l", amount: "1.00" } },
    program: null,
    channel: null,
  };
  const insert = preparedStatement<typeof events.$inferInsert & { ok: number }>((d, p) => insertIf(d, events, placeholderRow(events, p), sql`1 = ${p("ok")}`));
  const row = {
    id: envelope.id,
    seq: 1,
    tenantId: envelope.tenantId,
    type: envelope.type,
    mode: envelope.mode,
    loanId: null,
    envelope,
    createdAt: new Date(envelope.createdAt),
    relayedAt: null,
  };
  await db.batch([insert(db, { ...row, ok: 1 })]);
  expect(await db.select().from(events).where(eq(events.id, envelope.id))).toEqual([row]);
});

test("a value missing from a call is an error, not a silent NULL", () => {
  const { logIndex: _, ...partial } = settlementRow();
  expect(() => settlementInsert(db, { ...(partial as ReturnType<typeof settlementRow>), ok: 1 })).toThrow(/no value for logIndex/);
});
