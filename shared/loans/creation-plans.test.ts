import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { borrowers } from "../../db/schema/borrowers.ts";
import { tenants } from "../../db/schema/tenants.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { openLoansOfBorrowerQuery } from "./decide-loan.ts";
import { openPrincipalOfLine } from "./open-loans.ts";

/**
 * Issue 16: loan creation counts a borrower's open loans of the loan's mode
 * twice (its reads, and the guard of its decision) and a widget draw sums
 * its credit line's open principal. Without statistics (D1 never runs
 * ANALYZE by itself) SQLite tied the two indexes matching two equality
 * terms and counted through (tenant_id, mode): every loan of the tenant's
 * mode, so creation slowed as the tenant's history grew. Each now reads
 * only the borrower's (or the line's) own loans, with or without
 * statistics. The SQL is the production builders' own.
 */
const BORROWERS = 20;
const COPIES = 50;

let t: TestApp;
let tenantId: string;
let programId: string;

beforeAll(async () => {
  t = await createTestApp();
  const merchant = await sandboxTenant(t);
  for (let i = 0; i < BORROWERS; i++) await createdLoan(t, merchant.key, { borrowerRef: `history-${i}`, principalAmount: "10.00" });
  const me = await t.request("GET", "/v1/me", { headers: apiKey(merchant.key) });
  tenantId = me.body.tenant.id as string;
  programId = "00000000-0000-4000-8000-00000000000p";
  // History: each loan copied COPIES times (new ids and keys, same borrower, tenant and mode).
  const columns = (await t.client.execute("SELECT name FROM pragma_table_info('loans') ORDER BY cid")).rows.map((r) => String(r.name));
  const set: Record<string, string> = {
    id: "l.id || '-' || n.i",
    idempotency_key: "l.idempotency_key || '-' || n.i",
    write_token: "l.write_token || '-' || n.i",
  };
  await t.client.execute({
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${COPIES})
          INSERT INTO loans (${columns.join(", ")}) SELECT ${columns.map((c) => set[c] ?? `l.${c}`).join(", ")} FROM n, loans AS l WHERE l.tenant_id = ?`,
    args: [tenantId],
  });
});
afterAll(() => t.close());

/** EXPLAIN QUERY PLAN of a drizzle query, its details joined by lines. */
async function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string> {
  const { sql: text, params } = query.toSQL();
  const plan = await t.client.execute({ sql: `EXPLAIN QUERY PLAN ${text}`, args: params as never[] });
  return plan.rows.map((r) => String(r.detail)).join("\n");
}

const plans = async () => {
  const { db } = t;
  const borrowerOfRef = sql`(SELECT ${borrowers.id} FROM ${borrowers} WHERE ${borrowers.tenantId} = ${tenantId} AND ${borrowers.borrowerRef} = ${"history-1"})`;
  return {
    // The decision's reads after creation (processing-reads.ts) and the guard of a creation decision (otherThan).
    borrowerOpenLoans: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: "b", mode: "sandbox" })),
    decisionGuard: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: "b", mode: "sandbox", otherThan: "l" })),
    // Creation's reads: the borrower by its ref, in a subquery.
    creationReads: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: borrowerOfRef, mode: "sandbox" })),
    // A credit line's open principal, as a draw's insert and the line's read compute it.
    creditLine: await planOf(
      db
        .select({ open: openPrincipalOfLine({ tenantId, programId, walletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72" }) })
        .from(tenants)
        .where(eq(tenants.id, tenantId)),
    ),
  };
};

function expectOwnLoansOnly(p: Awaited<ReturnType<typeof plans>>) {
  const borrowerRange = /SEARCH loans USING (COVERING )?INDEX loans_tenant_borrower_mode_idx \(tenant_id=\? AND borrower_id=\? AND mode=\?/;
  expect(p.borrowerOpenLoans).toMatch(borrowerRange);
  expect(p.decisionGuard).toMatch(borrowerRange);
  expect(p.creationReads).toMatch(borrowerRange);
  expect(p.creditLine).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_line_idx \(tenant_id=\? AND program_id=\? AND borrower_wallet_address=\?/);
  for (const plan of Object.values(p)) {
    expect(plan).not.toMatch(/\bSCAN loans\b/);
    expect(plan).not.toContain("loans_tenant_mode_created_idx");
  }
}

describe(`a tenant with ${BORROWERS * (COPIES + 1)} loans of one mode`, () => {
  test("the history is there: every borrower has its own loans among the tenant's", async () => {
    const rows = await t.client.execute({ sql: "SELECT COUNT(*) AS n, COUNT(DISTINCT borrower_id) AS b FROM loans WHERE tenant_id = ?", args: [tenantId] });
    expect(Number(rows.rows[0]!.n)).toBe(BORROWERS * (COPIES + 1));
    expect(Number(rows.rows[0]!.b)).toBe(BORROWERS);
  });

  test("creation's counts read the borrower's own loans (and a draw its line's), without statistics as on D1", async () => {
    expectOwnLoansOnly(await plans());
  });

  test("and the same once the planner has statistics (ANALYZE)", async () => {
    await t.client.execute("ANALYZE");
    expectOwnLoansOnly(await plans());
  });
});
