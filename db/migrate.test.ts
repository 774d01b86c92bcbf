import { createClient } from "@libsql/client";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { describe, expect, test } from "bun:test";
import { readMigrations } from "./migration-files.ts";
import { migrateLibsql, splitStatements } from "./migrate.ts";
import { schema } from "./schema.ts";

describe("splitStatements", () => {
  test("splits on line-ending semicolons and drops comment lines", () => {
    const sql = "-- header\nCREATE TABLE a (\n  x INTEGER -- inline stays\n);\nCREATE INDEX i ON a (x);\n";
    expect(splitStatements(sql)).toEqual(["CREATE TABLE a (\n  x INTEGER -- inline stays\n)", "CREATE INDEX i ON a (x)"]);
  });
  test("a final statement without semicolon is kept", () => {
    expect(splitStatements("SELECT 1;\nSELECT 2")).toEqual(["SELECT 1", "SELECT 2"]);
  });
});

describe("migrateLibsql", () => {
  test("applies every file once and records it like wrangler does", async () => {
    const client = createClient({ url: ":memory:" });
    const first = await migrateLibsql(client, readMigrations());
    expect(first.length).toBe(readMigrations().length);
    expect(await migrateLibsql(client, readMigrations())).toEqual([]);
    const rs = await client.execute("SELECT name FROM d1_migrations ORDER BY id");
    expect(rs.rows.map((r) => r.name)).toEqual(first);
  });

  test("every drizzle table and column exists in the migrated database", async () => {
    const client = createClient({ url: ":memory:" });
    await migrateLibsql(client, readMigrations());
    for (const table of Object.values(schema)) {
      const cfg = getTableConfig(table);
      const rs = await client.execute(`PRAGMA table_info(${cfg.name})`);
      const columns = new Set(rs.rows.map((r) => String(r.name)));
      expect(columns.size).toBeGreaterThan(0);
      for (const col of cfg.columns) expect(columns).toContain(col.name);
      expect(columns.size).toBe(cfg.columns.length);
    }
  });

  test("every drizzle index exists in the migrated database on the same columns, unique and partial alike, and no other", async () => {
    const client = createClient({ url: ":memory:" });
    await migrateLibsql(client, readMigrations());
    const rs = await client.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL");
    const migrated = new Map(rs.rows.map((r) => [String(r.name), String(r.sql)]));
    const declared = new Set<string>();
    for (const table of Object.values(schema)) {
      for (const index of getTableConfig(table).indexes) {
        const { name, columns, unique, where } = index.config;
        declared.add(name);
        const sql = migrated.get(name);
        expect(sql, name).toBeDefined();
        const info = await client.execute(`PRAGMA index_info(${name})`);
        // Expression columns (no name in drizzle) are null in index_info.
        expect(
          info.rows.map((r) => r.name ?? null),
          name,
        ).toEqual(columns.map((c) => ("name" in c ? c.name : null)));
        expect(sql!.startsWith("CREATE UNIQUE INDEX"), name).toBe(unique);
        expect(/\bWHERE\b/.test(sql!), name).toBe(where !== undefined);
      }
    }
    expect([...migrated.keys()].filter((name) => !declared.has(name))).toEqual([]);
  });

  test("0026 gives every notification its event's seq, those of before and those the old release still writes", async () => {
    const client = createClient({ url: ":memory:" });
    const all = readMigrations();
    const at = all.findIndex((m) => m.name.startsWith("0026_"));
    await migrateLibsql(client, all.slice(0, at));
    await client.batch(
      [
        "INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)",
        ...[7, 3].map(
          (seq) =>
            `INSERT INTO events (id, seq, tenant_id, type, mode, envelope, created_at) VALUES ('e${seq}', ${seq}, 't', 'loan.funded', 'sandbox', '{}', 0)`,
        ),
        ...[7, 3].map(
          (seq) =>
            `INSERT INTO notifications (id, tenant_id, event_id, event_type, title, body, email_status, created_at) VALUES ('n${seq}', 't', 'e${seq}', 'loan.funded', 't', 'b', 'SKIPPED', 0)`,
        ),
      ],
      "write",
    );
    await migrateLibsql(client, all);
    const rows = await client.execute("SELECT id, event_seq FROM notifications ORDER BY id");
    expect(rows.rows.map((r) => [r.id, r.event_seq])).toEqual([
      ["n3", 3],
      ["n7", 7],
    ]);
    // The release before, still running until the new code deploys, inserts without event_seq: the row takes its event's.
    await client.batch(
      [
        "INSERT INTO events (id, seq, tenant_id, type, mode, envelope, created_at) VALUES ('e9', 9, 't', 'loan.funded', 'sandbox', '{}', 0)",
        "INSERT INTO notifications (id, tenant_id, event_id, event_type, title, body, email_status, created_at) VALUES ('n9', 't', 'e9', 'loan.funded', 't', 'b', 'SKIPPED', 0)",
      ],
      "write",
    );
    expect((await client.execute("SELECT event_seq FROM notifications WHERE id = 'n9'")).rows[0]!.event_seq).toBe(9);
  });

  test("0028 gives every delivery its endpoint's mode, those of before and those the old release still writes", async () => {
    const client = createClient({ url: ":memory:" });
    const all = readMigrations();
    const at = all.findIndex((m) => m.name.startsWith("0028_"));
    await migrateLibsql(client, all.slice(0, at));
    const delivery = (id: string, endpoint: string, redeliveryOf = "NULL") =>
      `INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, endpoint_id, redelivery_of, status, created_at, updated_at) VALUES ('${id}', 't', 'e1', 'loan.funded', '${endpoint}', ${redeliveryOf}, 'SUCCEEDED', 0, 0)`;
    await client.batch(
      [
        "INSERT INTO tenants (id, name, created_at) VALUES ('t', 't', 0)",
        "INSERT INTO events (id, seq, tenant_id, type, mode, envelope, created_at) VALUES ('e1', 1, 't', 'loan.funded', 'sandbox', '{}', 0)",
        ...["sandbox", "live"].map(
          (mode) =>
            `INSERT INTO webhook_endpoints (id, tenant_id, url, events, mode, secret_ciphertext, secret_prefix, created_at) VALUES ('ep-${mode}', 't', 'https://example.com/${mode}', '["*"]', '${mode}', 'x', 'whsec', 0)`,
        ),
        delivery("d-sandbox", "ep-sandbox"),
        delivery("d-live", "ep-live"),
      ],
      "write",
    );
    await migrateLibsql(client, all);
    await client.execute(delivery("d-late", "ep-live", "'d-live'"));
    const rows = await client.execute("SELECT id, mode FROM webhook_deliveries ORDER BY id");
    expect(rows.rows.map((r) => [r.id, r.mode])).toEqual([
      ["d-late", "live"],
      ["d-live", "live"],
      ["d-sandbox", "sandbox"],
    ]);
  });

  test("a failing file leaves nothing half-applied", async () => {
    const client = createClient({ url: ":memory:" });
    await expect(migrateLibsql(client, [{ name: "0001_bad.sql", sql: "CREATE TABLE ok (x INTEGER);\nCREATE TABLE broken (;\n" }])).rejects.toThrow();
    const rs = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ok'");
    expect(rs.rows.length).toBe(0);
  });

  test("the pending files apply together: one that fails leaves the files before it unapplied too, and a run after the fix applies them all", async () => {
    const client = createClient({ url: ":memory:" });
    const good = { name: "0001_good.sql", sql: "CREATE TABLE good (x INTEGER);\n" };
    await expect(migrateLibsql(client, [good, { name: "0002_bad.sql", sql: "CREATE TABLE broken (;\n" }])).rejects.toThrow();
    expect((await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'good'")).rows.length).toBe(0);
    expect((await client.execute("SELECT name FROM d1_migrations")).rows.length).toBe(0);
    expect(await migrateLibsql(client, [good, { name: "0002_fixed.sql", sql: "CREATE TABLE fixed (y INTEGER);\n" }])).toEqual([
      "0001_good.sql",
      "0002_fixed.sql",
    ]);
    expect(await migrateLibsql(client, [good, { name: "0002_fixed.sql", sql: "CREATE TABLE fixed (y INTEGER);\n" }])).toEqual([]);
    expect((await client.execute("SELECT name FROM d1_migrations ORDER BY id")).rows.map((r) => r.name)).toEqual(["0001_good.sql", "0002_fixed.sql"]);
  });
});
