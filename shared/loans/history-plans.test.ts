import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tenants } from "../../db/schema/tenants.ts";
import { verifiedUserUpdate } from "../auth/email-verification.ts";
import { eventsPageQuery } from "../events/list-events.ts";
import { markAllReadStatement, notificationsPageQuery } from "../notifications/notification-verbs.ts";
import { orphanedCreditsQuery } from "../settlement/reverse-repayment.ts";
import { todayStatsQueries } from "../stats/today-stats.ts";
import { deliveriesPageQuery } from "../webhooks/delivery-history.ts";
import { apiKey, createdLoan, sandboxTenant } from "../testing/loan-fixtures.ts";
import { createTestApp, type TestApp } from "../testing/harness.ts";
import { copyLoans } from "../testing/loan-copies.ts";
import { borrowerIdOfRef, openLoansOfBorrowerQuery } from "./decide-loan.ts";
import { loansPageQuery } from "./list-loans.ts";
import { openPrincipalOfLine } from "./open-loans.ts";

/**
 * Issue 16: reads whose range must be their subject's own rows, however long
 * the tenant's history. Loan creation counts a borrower's open loans of the
 * loan's mode twice (its reads, and the guard of its decision), the widget's
 * eligibility counts them by the borrower's ref, and a draw sums its credit
 * line's open principal. Without statistics (D1 never runs ANALYZE by
 * itself) SQLite tied the indexes matching two equality terms and counted
 * through (tenant_id, mode): every loan of the tenant's mode, so creation
 * slowed as the history grew. Likewise a loan's events (GET /v1/events?loanId=)
 * were found by walking the tenant's events of the mode, a reorged payment's
 * credits by walking every settlement of the chain, and an e-mail
 * verification tested every user; the delivery history of a mode, a status,
 * an endpoint or a type walked the tenant's deliveries, the unread
 * notifications (every dashboard's home) the tenant's events, the review
 * queue and the Home's numbers the mode's loans. The SQL is the production
 * builders' own.
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
  await copyLoans(t, {
    where: "l.tenant_id = ?",
    args: [tenantId],
    copies: COPIES,
    set: { id: "l.id || '-' || n.i", idempotency_key: "l.idempotency_key || '-' || n.i", write_token: "l.write_token || '-' || n.i" },
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
  return {
    // The decision's reads after creation (processing-reads.ts) and the guard of a creation decision (otherThan).
    borrowerOpenLoans: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: "b", mode: "sandbox" })),
    decisionGuard: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: "b", mode: "sandbox", otherThan: "l" })),
    // Creation's reads and the widget's eligibility: the borrower by its ref, in a subquery.
    creationReads: await planOf(openLoansOfBorrowerQuery(db, { tenantId, borrowerId: borrowerIdOfRef(tenantId, "history-1"), mode: "sandbox" })),
    // A credit line's open principal, as a draw's insert and the line's read compute it.
    creditLine: await planOf(
      db
        .select({ open: openPrincipalOfLine({ tenantId, programId, walletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72" }) })
        .from(tenants)
        .where(eq(tenants.id, tenantId)),
    ),
    // GET /v1/loans with a filter: an API key's list (its mode), and a session's (both modes).
    listByStatus: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "sandbox", status: "ACTIVE" }, limit: 20 })),
    listDeclined: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "sandbox", status: "DECLINED" }, limit: 20 })),
    listByRef: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "sandbox", borrowerRef: "history-1", status: "ACTIVE" }, limit: 20 })),
    listByRefBothModes: await planOf(loansPageQuery(db, { tenantId, filters: { borrowerRef: "history-1" }, limit: 20 })),
    listByWallet: await planOf(
      loansPageQuery(db, { tenantId, filters: { mode: "sandbox", borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72" }, limit: 20 }),
    ),
    // The review queue (a dashboard's: its mode).
    reviewQueue: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "sandbox", decision: "MANUAL_REVIEW" }, limit: 20 })),
    // A CREATED list reads its undecided, APPROVED and MANUAL_REVIEW parts (listLoans), never the declined ones.
    createdUndecided: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "live", status: "CREATED" }, undecided: true, limit: 20 })),
    createdApproved: await planOf(loansPageQuery(db, { tenantId, filters: { mode: "live", status: "CREATED", decision: "APPROVED" }, limit: 20 })),
    reviewByRef: await planOf(loansPageQuery(db, { tenantId, filters: { borrowerRef: "history-1", decision: "MANUAL_REVIEW" }, limit: 20 })),
    eventsOfType: await planOf(eventsPageQuery(db, { tenantId, mode: "sandbox", type: "loan.funded", limit: 20 }, null)),
    // Notifications: the unread ones (every dashboard home, of its mode; a session's of both), all of a mode, "mark all read".
    unreadOfMode: await planOf(notificationsPageQuery(db, { tenantId, mode: "sandbox", unread: true, limit: 20 }, null)),
    unreadBothModes: await planOf(notificationsPageQuery(db, { tenantId, unread: true, limit: 20 }, 100)),
    notificationsOfMode: await planOf(notificationsPageQuery(db, { tenantId, mode: "sandbox", limit: 20 }, 100)),
    markAllRead: await planOf(markAllReadStatement(db, { tenantId, mode: "sandbox", now: { sandbox: new Date(), live: new Date() } })),
    // The dashboard Home's numbers: today's per stablecoin, the outstanding ACTIVE loans, the review queue's count.
    todayStats: await Promise.all(todayStatsQueries(db, { tenantId, mode: "sandbox", now: new Date() }).map(planOf)),
    loanEvents: await planOf(eventsPageQuery(db, { tenantId, mode: "sandbox", loanId: "l", limit: 20 }, null)),
    loanEventsOfType: await planOf(eventsPageQuery(db, { tenantId, mode: "sandbox", loanId: "l", type: "loan.funded", limit: 20 }, 100)),
    orphanedCredits: await planOf(
      orphanedCreditsQuery(db, { tenantId, loanId: "l", payment: { chain: "POLYGON", txHash: `0x${"ab".repeat(32)}`, logIndex: 0 } }),
    ),
    // GET /v1/webhooks/deliveries filtered by status (an API key's: its mode), and by a loan.
    deliveriesOfMode: await planOf(deliveriesPageQuery(db, { tenantId, mode: "live", limit: 20 })),
    deliveriesFailed: await planOf(deliveriesPageQuery(db, { tenantId, mode: "sandbox", status: "FAILED", limit: 20 })),
    deliveriesOfEndpoint: await planOf(deliveriesPageQuery(db, { tenantId, mode: "sandbox", endpointId: "e", status: "FAILED", limit: 20 })),
    deliveriesOfType: await planOf(deliveriesPageQuery(db, { tenantId, mode: "live", eventType: "loan.funded", limit: 20 })),
    failedOfType: await planOf(deliveriesPageQuery(db, { tenantId, mode: "live", eventType: "loan.funded", status: "FAILED", limit: 20 })),
    succeededOfType: await planOf(deliveriesPageQuery(db, { tenantId, mode: "live", eventType: "loan.funded", status: "SUCCEEDED", limit: 20 })),
    deliveriesOfLoan: await planOf(deliveriesPageQuery(db, { tenantId, mode: "sandbox", loanId: "l", limit: 20 })),
  };
};

function expectOwnLoansOnly(p: Awaited<ReturnType<typeof plans>>, analyzed = false) {
  const borrowerRange = /SEARCH loans USING (COVERING )?INDEX loans_tenant_borrower_mode_idx \(tenant_id=\? AND borrower_id=\? AND mode=\?/;
  expect(p.borrowerOpenLoans).toMatch(borrowerRange);
  expect(p.decisionGuard).toMatch(borrowerRange);
  expect(p.creationReads).toMatch(borrowerRange);
  expect(p.creditLine).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_line_idx \(tenant_id=\? AND program_id=\? AND borrower_wallet_address=\?/);
  expect(p.listByStatus).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_mode_status_created_idx \(tenant_id=\? AND mode=\? AND status=\?/);
  expect(p.listByRef).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_ref_created_idx \(tenant_id=\? AND borrower_ref=\?/);
  expect(p.listByRefBothModes).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_ref_created_idx \(tenant_id=\? AND borrower_ref=\?/);
  expect(p.listByWallet).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_wallet_created_idx \(tenant_id=\? AND borrower_wallet_address=\?/);
  // Loans still CREATED (in review, declined) through (tenant, status, decision), the mode compared beside.
  const stillCreated = /SEARCH loans USING (COVERING )?INDEX loans_tenant_status_created_idx \(tenant_id=\? AND status=\? AND decision_outcome=\?\)/;
  expect(p.reviewQueue).toMatch(stillCreated);
  expect(p.listDeclined).toMatch(stillCreated);
  expect(p.createdUndecided).toMatch(stillCreated);
  expect(p.createdApproved).toMatch(stillCreated);
  // A borrower's own rows, whatever the other filters: the ref's range, never a status's across borrowers.
  expect(p.reviewByRef).toMatch(/SEARCH loans USING (COVERING )?INDEX loans_tenant_ref_created_idx \(tenant_id=\? AND borrower_ref=\?\)/);
  expect(p.eventsOfType).toMatch(/SEARCH events USING (COVERING )?INDEX events_tenant_mode_type_idx \(tenant_id=\? AND mode=\? AND type=\?/);
  const unread = /SEARCH notifications USING INDEX notifications_unread_idx \(tenant_id=\?/;
  expect(p.unreadOfMode).toMatch(unread);
  expect(p.unreadBothModes).toMatch(unread);
  expect(p.markAllRead).toMatch(unread);
  expect(p.notificationsOfMode).toMatch(/SEARCH notifications USING INDEX notifications_tenant_mode_seq_idx \(tenant_id=\? AND mode=\? AND event_seq<\?\)/);
  for (const plan of [p.unreadOfMode, p.unreadBothModes, p.notificationsOfMode, p.markAllRead]) expect(plan).not.toMatch(/\bevents\b|USE TEMP B-TREE/);
  // The Home's numbers, without statistics as on D1 (once ANALYZE has seen one tenant holding the
  // whole table, every loan of the tenant's mode is every row, and a scan is as cheap as any range).
  const [usdt, usdc, review] = p.todayStats;
  if (!analyzed) {
    for (const coin of [usdt, usdc]) {
      expect(coin).toMatch(/SEARCH loans USING INDEX loans_tenant_mode_coin_updated_idx \(tenant_id=\? AND mode=\? AND stablecoin=\? AND updated_at>\?\)/);
      expect(coin).toMatch(/SEARCH loans USING COVERING INDEX loans_tenant_mode_coin_updated_idx \(tenant_id=\? AND mode=\? AND stablecoin=\?\)/);
      expect(coin).toMatch(/SEARCH loans USING INDEX loans_tenant_mode_status_created_idx \(tenant_id=\? AND mode=\? AND status=\?\)/);
    }
    expect(review).toMatch(stillCreated);
  }
  // A page comes in index order: never sorted after reading the range.
  for (const list of [
    p.listByStatus,
    p.listByRef,
    p.listByRefBothModes,
    p.listByWallet,
    p.reviewQueue,
    p.listDeclined,
    p.createdUndecided,
    p.createdApproved,
    p.reviewByRef,
    p.eventsOfType,
  ]) {
    expect(list).not.toContain("USE TEMP B-TREE");
  }
  const loanRange = /SEARCH events USING (COVERING )?INDEX events_tenant_loan_idx \(tenant_id=\? AND loan_id=\?/;
  expect(p.loanEvents).toMatch(loanRange);
  expect(p.loanEventsOfType).toMatch(loanRange);
  expect(p.orphanedCredits).toMatch(/SEARCH settlements USING (COVERING )?INDEX settlements_loan_idx \(tenant_id=\? AND loan_id=\?/);
  // A mode's deliveries, and those of a status, read their own range in index order; a loan's are its events' (sorted: a loan has a few).
  expect(p.deliveriesOfMode).toMatch(/SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_tenant_mode_idx \(tenant_id=\? AND mode=\?\)/);
  expect(p.deliveriesFailed).toMatch(
    /SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_tenant_mode_status_idx \(tenant_id=\? AND mode=\? AND status=\?\)/,
  );
  expect(p.deliveriesOfEndpoint).toMatch(/SEARCH webhook_deliveries USING INDEX webhook_deliveries_endpoint_idx \(endpoint_id=\?\)/);
  expect(p.deliveriesOfType).toMatch(
    /SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_tenant_mode_type_idx \(tenant_id=\? AND mode=\? AND event_type=\?\)/,
  );
  // A status and a type: the rarer one's range (few deliveries fail; most succeed).
  expect(p.failedOfType).toMatch(/INDEX webhook_deliveries_tenant_mode_status_idx \(tenant_id=\? AND mode=\? AND status=\?\)/);
  expect(p.succeededOfType).toMatch(/INDEX webhook_deliveries_tenant_mode_type_idx \(tenant_id=\? AND mode=\? AND event_type=\?\)/);
  for (const plan of [p.deliveriesOfMode, p.deliveriesFailed, p.deliveriesOfEndpoint, p.deliveriesOfType, p.failedOfType, p.succeededOfType]) {
    expect(plan).not.toContain("USE TEMP B-TREE");
  }
  expect(p.deliveriesOfLoan).toMatch(/SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_event_idx \(event_id=\?/);
  expect(p.deliveriesOfLoan).toMatch(loanRange);
  expect(p.deliveriesOfLoan).not.toMatch(/webhook_deliveries_tenant_mode/);
  for (const plan of Object.entries(p).flatMap(([name, plan]) => (analyzed && name === "todayStats" ? [] : plan))) {
    expect(plan).not.toMatch(/\bSCAN (loans|events|settlements|webhook_deliveries|notifications)\b/);
    expect(plan).not.toMatch(/loans_tenant_mode_created_idx|loans_tenant_created_idx|events_tenant_mode_seq_idx|settlements_chain_block_idx/);
  }
}

describe(`a tenant with ${BORROWERS * (COPIES + 1)} loans of one mode`, () => {
  test("the history is there: every borrower has its own loans among the tenant's", async () => {
    const rows = await t.client.execute({ sql: "SELECT COUNT(*) AS n, COUNT(DISTINCT borrower_id) AS b FROM loans WHERE tenant_id = ?", args: [tenantId] });
    expect(Number(rows.rows[0]!.n)).toBe(BORROWERS * (COPIES + 1));
    expect(Number(rows.rows[0]!.b)).toBe(BORROWERS);
  });

  test("every read served often stays within its own rows (creation's counts, a draw's line, the lists, the Home's numbers), without statistics as on D1", async () => {
    expectOwnLoansOnly(await plans());
  });

  test("an e-mail verification marks its own user, found by a unique key, never testing every user", async () => {
    const plan = await planOf(verifiedUserUpdate(t.db, "0".repeat(64), new Date()));
    // Its id or its (unique) address, both the claimed token's.
    expect(plan).toMatch(/SEARCH users USING INDEX sqlite_autoindex_users_\d \((id|email)=\?\)/);
    expect(plan).not.toMatch(/\bSCAN users\b/);
  });

  test("and the same once the planner has statistics (ANALYZE)", async () => {
    await t.client.execute("ANALYZE");
    expectOwnLoansOnly(await plans(), true);
  });
});
