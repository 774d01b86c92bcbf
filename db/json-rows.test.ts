import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { customType, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createDb, type Db } from "./create-db.ts";
import { jsonRows, selectJsonRows } from "./json-rows.ts";
import { preparedStatement } from "./prepared-statements.ts";
import { bool, json, timestamp } from "./schema/columns.ts";

// Rows as one JSON parameter: stored exactly as drizzle's own multi-row insert stores them.

const scratch = sqliteTable("json_rows_scratch", {
  id: text("id").primaryKey(),
  at: timestamp("at").notNull(),
  flag: bool("flag"),
  tags: json<string[]>("tags").notNull(),
  mode: text("mode").notNull().default("sandbox"),
  count: integer("count").notNull().default(0),
  note: text("note"),
});

const client = createClient({ url: ":memory:" });
let db: Db;
beforeAll(async () => {
  db = createDb(client);
  await db.run(
    sql`CREATE TABLE json_rows_scratch (id TEXT PRIMARY KEY, at INTEGER NOT NULL, flag INTEGER, tags TEXT NOT NULL, mode TEXT NOT NULL DEFAULT 'sandbox', count INTEGER NOT NULL DEFAULT 0, note TEXT)`,
  );
});
afterAll(() => client.close());

const insertRows = preparedStatement<{ rows: string }>((d, p) =>
  d
    .insert(scratch)
    .select(selectJsonRows(scratch, p("rows")))
    .onConflictDoNothing(),
);
const run = (item: unknown) => db.batch([item] as [never]);

describe("jsonRows + selectJsonRows", () => {
  const at = new Date("2026-11-23T08:00:00.123Z");
  const rows = (prefix: string): (typeof scratch.$inferInsert)[] => [
    { id: `${prefix}-1`, at, flag: true, tags: ["loan.funded", 'it\'s "quoted"'], mode: "live", count: 7, note: "ünïcode ✓ 'x'" },
    { id: `${prefix}-2`, at, flag: false, tags: [], note: null },
    { id: `${prefix}-3`, at: new Date(0), tags: ["*"] },
  ];

  test("each value goes through its column's encoder and a missing one takes the column's default: the rows read back as drizzle's insert wrote its own", async () => {
    await run(insertRows(db, { rows: jsonRows(scratch, rows("json")) }));
    await db.insert(scratch).values(rows("drizzle"));
    const read = await db.select().from(scratch);
    const byId = new Map(read.map((r) => [r.id, r]));
    for (const n of [1, 2, 3]) {
      const { id: _j, ...viaJson } = byId.get(`json-${n}`)!;
      const { id: _d, ...viaDrizzle } = byId.get(`drizzle-${n}`)!;
      expect(viaJson).toEqual(viaDrizzle);
    }
    expect(byId.get("json-1") as unknown).toEqual({ ...rows("json")[0]!, id: "json-1" });
    expect(byId.get("json-2")).toMatchObject({ flag: false, mode: "sandbox", count: 0, note: null });
    expect(byId.get("json-3")).toMatchObject({ at: new Date(0), flag: null });
    // The raw storage too: milliseconds, 0/1, JSON text.
    const raw = await client.execute("SELECT at, flag, tags FROM json_rows_scratch WHERE id = 'json-1'");
    expect(raw.rows[0]).toMatchObject({ at: at.getTime(), flag: 1, tags: JSON.stringify(rows("x")[0]!.tags) });
  });

  test("conflicting rows are skipped as the statement says; 300 rows are one statement", async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ id: `many-${i}`, at, tags: [String(i)], count: i }));
    await run(insertRows(db, { rows: jsonRows(scratch, [...many, { id: "json-1", at, tags: ["changed"] }]) }));
    const read = await db.select().from(scratch).where(sql`id LIKE 'many-%' OR id = 'json-1'`);
    expect(read.length).toBe(301);
    expect(read.find((r) => r.id === "json-1")!.tags).toEqual(["loan.funded", 'it\'s "quoted"']);
    expect(read.filter((r) => r.id.startsWith("many-") && r.count === Number(r.tags[0])).length).toBe(300);
  });

  test("a bigint is refused (JSON numbers would round it), as is a column key that is no plain identifier", () => {
    const bigintColumn = customType<{ data: bigint; driverData: bigint }>({ dataType: () => "integer", toDriver: (v) => v });
    const money = sqliteTable("money_scratch", { id: text("id").primaryKey(), units: bigintColumn("units") });
    expect(() => jsonRows(money, [{ id: "a", units: 2n ** 60n }])).toThrow(/bigint/);
    const odd = sqliteTable("odd_scratch", { "weird')": text("weird") });
    expect(() => selectJsonRows(odd, sql.placeholder("rows"))).toThrow(/plain identifier/);
  });
});
