import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { countRoundTrips } from "../testing/count-round-trips.ts";
import { signUpTenant } from "../testing/fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { describedTenant } from "./description-cache.ts";

let t: TestApp;
let tenantId: string;
let otherId: string;
beforeAll(async () => {
  t = await createTestApp();
  tenantId = (await signUpTenant(t, "Described")).tenantId;
  otherId = (await signUpTenant(t, "Bystander")).tenantId;
});
afterAll(() => t.close());

const versionOf = async (id: string) =>
  Number((await t.client.execute({ sql: "SELECT description_version AS v FROM tenants WHERE id = ?", args: [id] })).rows[0]!.v);
const run = (sql: string, ...args: string[]) => t.client.execute({ sql, args });

/** Runs `change` and says by how much it moved the tenant's version, checking the other tenant's did not move. */
async function bumpOf(change: () => Promise<unknown>): Promise<number> {
  const [before, otherBefore] = [await versionOf(tenantId), await versionOf(otherId)];
  await change();
  expect(await versionOf(otherId)).toBe(otherBefore);
  return (await versionOf(tenantId)) - before;
}

/** A copy of one of the tenant's rows of `table` under `id` (a temp table, so every column is copied whatever the schema). */
async function copyRow(table: string, id: string, set = "") {
  await run("DROP TABLE IF EXISTS temp.copied");
  await run(`CREATE TEMP TABLE copied AS SELECT * FROM ${table} WHERE tenant_id = ? LIMIT 1`, tenantId);
  await run(`UPDATE temp.copied SET id = ?${set}`, id);
  await run(`INSERT INTO ${table} SELECT * FROM temp.copied`);
}

describe("triggers bump tenants.description_version with every change to what GET /v1/me describes (migration 0023)", () => {
  for (const table of ["merchant_configs", "loan_products", "widget_programs"]) {
    test(`${table}: insert, update and delete each bump it, and only the tenant's own`, async () => {
      const id = `copy-of-${table}`;
      // A loan product belongs to one configuration (unique): the copy gets a configuration of its own.
      if (table === "loan_products") await copyRow("merchant_configs", "config-for-product-copy");
      const extra =
        table === "loan_products" ? ", merchant_config_id = 'config-for-product-copy'" : table === "widget_programs" ? ", embed_key = 'ek_test_copied'" : "";
      expect(await bumpOf(() => copyRow(table, id, extra))).toBe(1);
      expect(await bumpOf(() => run(`UPDATE ${table} SET updated_at = updated_at + 1 WHERE id = ?`, id))).toBe(1);
      expect(await bumpOf(() => run(`DELETE FROM ${table} WHERE id = ?`, id))).toBe(1);
      if (table === "loan_products") await run("DELETE FROM merchant_configs WHERE id = 'config-for-product-copy'");
    });
  }

  test("users: insert, delete, a role or a verification bump it; a password change or a new e-mail address does not", async () => {
    expect(await bumpOf(() => copyRow("users", "copied-user", ", email = 'copied.user@merchant.example'"))).toBe(1);
    expect(await bumpOf(() => run("UPDATE users SET role = 'MEMBER' WHERE id = 'copied-user'"))).toBe(1);
    expect(await bumpOf(() => run("UPDATE users SET email_verified_at = 1 WHERE id = 'copied-user'"))).toBe(1);
    expect(await bumpOf(() => run("UPDATE users SET password_hash = 'other' WHERE id = 'copied-user'"))).toBe(0);
    expect(await bumpOf(() => run("UPDATE users SET email = 'moved.user@merchant.example' WHERE id = 'copied-user'"))).toBe(0);
    expect(await bumpOf(() => run("DELETE FROM users WHERE id = 'copied-user'"))).toBe(1);
  });
});

describe("describedTenant: the isolate's copy at the version the lookup read", () => {
  test("the same version reads nothing; a bumped one reads again, once", async () => {
    const first = await countRoundTrips(t.client, () => describedTenant(t.db, tenantId, undefined));
    expect(first.trips).toBe(1);
    const version = await versionOf(tenantId);
    const warm = await countRoundTrips(t.client, () => describedTenant(t.db, tenantId, version));
    expect(warm.trips).toBe(0);
    expect(warm.result).toBe(first.result);

    await run("UPDATE merchant_configs SET grace_period_days = 5 WHERE tenant_id = ?", tenantId);
    const stale = await countRoundTrips(t.client, () => describedTenant(t.db, tenantId, version + 1));
    expect(stale.trips).toBe(1);
    expect(stale.result.merchantConfigs.every((m) => m.gracePeriodDays === 5)).toBe(true);
    expect((await countRoundTrips(t.client, () => describedTenant(t.db, tenantId, version + 1))).trips).toBe(0);
  });

  test("without a version (a principal not from a lookup), it always reads", async () => {
    await describedTenant(t.db, tenantId, undefined);
    expect((await countRoundTrips(t.client, () => describedTenant(t.db, tenantId, undefined))).trips).toBe(1);
  });

  test("a copy is never another tenant's", async () => {
    const mine = await describedTenant(t.db, tenantId, await versionOf(tenantId));
    const theirs = await describedTenant(t.db, otherId, await versionOf(otherId));
    expect(mine.merchantConfigs.every((m) => m.tenantId === tenantId)).toBe(true);
    expect(theirs.merchantConfigs.every((m) => m.tenantId === otherId)).toBe(true);
    expect(theirs.users.map((u) => u.id)).not.toContain(mine.users[0]!.id);
  });
});
