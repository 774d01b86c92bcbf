import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { createClient } from "@libsql/client";
import { createDb } from "../../db/create-db.ts";
import { readMigrations } from "../../db/migration-files.ts";
import { migrateLibsql } from "../../db/migrate.ts";
import { events } from "../../db/schema/events.ts";
import { loans } from "../../db/schema/loans.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { DAY_MS } from "../domain/pricing.ts";
import { sweepDueLoans } from "./run-sweeps.ts";
import { dueLoansQuery } from "./sweep-loans.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("the sweep reads due loans through an index on status and due time, never a table scan", async () => {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  const db = createDb(client);
  for (const tenantId of [undefined, "00000000-0000-4000-8000-000000000000"]) {
    const q = dueLoansQuery(db, Date.now(), tenantId).toSQL();
    const plan = await client.execute({ sql: `EXPLAIN QUERY PLAN ${q.sql}`, args: q.params as never[] });
    const details = plan.rows.map((r) => String(r.detail)).join("\n");
    expect(details).toMatch(/SEARCH loans USING INDEX loans_(tenant_)?status_due_idx \(.*status=\?.*due_at<\?\)/);
    expect(details).not.toMatch(/SCAN loans\b/);
  }
  client.close();
});

test("a sweep that starts late catches up: overdue then defaulted in one run, once, late fees stopped at the default", async () => {
  const owner = await sandboxTenant(t);
  const key = owner.key;
  const loan = await createdLoan(t, key);
  // Thirty days pass with no tick at all.
  await t.db.update(tenants).set({ clockOffsetMs: 30 * DAY_MS }).where(eq(tenants.id, owner.tenantId));
  const first = await sweepDueLoans(t.db, t.deps.loans, t.clock.now());
  expect(first.failed).toBe(0);
  const again = await Promise.all([sweepDueLoans(t.db, t.deps.loans, t.clock.now()), sweepDueLoans(t.db, t.deps.loans, t.clock.now())]);
  expect(again.every((r) => r.failed === 0)).toBe(true);
  const types = (await t.db.select({ type: events.type }).from(events).where(eq(events.loanId, loan.id)).orderBy(events.seq)).map((e) => e.type);
  expect(types).toEqual(["loan.application_submitted", "loan.decision", "loan.funded", "loan.overdue", "loan.defaulted"]);
  const [row] = await t.db.select().from(loans).where(and(eq(loans.id, loan.id)));
  expect(row!.status).toBe("DEFAULTED");
  expect(row!.lateFeeDays).toBe(3);
  expect(row!.defaultedAt!.getTime()).toBe(row!.dueAt!.getTime() + 3 * DAY_MS);
  const view = await t.request("GET", `/v1/loans/${loan.id}`, { headers: { "x-api-key": key } });
  expect(view.body).toMatchObject({ status: "DEFAULTED", lateFee: "3.00", totalDue: "105.00", overdue: true });
});
