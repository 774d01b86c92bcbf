import { createClient } from "@libsql/client";
import { createDb, type Db } from "../db/create-db.ts";
import { migrateLibsql } from "../db/migrate.ts";
import { readMigrations } from "../db/migration-files.ts";
import { type LoanRow, loans } from "../db/schema/loans.ts";
import { DEV_SECRETS_KEY } from "../shared/crypto/secret-box.ts";
import { listEvents } from "../shared/events/list-events.ts";
import { borrowerIdOfRef, openLoansOfBorrowerQuery } from "../shared/loans/decide-loan.ts";
import { listLoans } from "../shared/loans/list-loans.ts";
import { listNotifications } from "../shared/notifications/notification-verbs.ts";
import { todayStats } from "../shared/stats/today-stats.ts";
import { listDeliveries } from "../shared/webhooks/delivery-history.ts";

/**
 * `npm run bench:history`: the reads a merchant's dashboard and API make on
 * every visit, timed as a tenant's history grows (issue 16: "reads within
 * their own rows"). Each must cost what its own rows cost, not what the
 * history holds, so its time at the largest history should stay near its
 * time at the smallest.
 *
 * SQLite in this process (libSQL, the same engine, schema, migrations and
 * query plans as D1, without statistics as on D1), not workerd: what is
 * timed is the statements, not the round trip, and every size runs the very
 * same production functions. The history, per size H (HISTORY_SIZES,
 * default 1,000, 10,000 and 100,000 loans): H loans of two months ago of
 * 1,000 borrowers, one in ten declined, the rest repaid, each with two
 * events, their notifications (read) and their deliveries to the sandbox
 * endpoint (succeeded). What is current, the same at every size: 20 loans
 * funded today, 5 awaiting review, 5 unread notifications, 3 failed
 * deliveries and 5 deliveries to a live endpoint. Each read is timed as the
 * median of HISTORY_SAMPLES calls (default 30).
 */
const SIZES = (process.env.HISTORY_SIZES ?? "1000,10000,100000").split(",").map(Number);
const SAMPLES = Number(process.env.HISTORY_SAMPLES ?? 30);
const DAY = 86_400_000;
const TENANT = "00000000-0000-4000-8000-0000000000t1";
const now = new Date();

/** A loan of the tenant as the history holds them (the copies change what differs). */
function loanRow(i: number): LoanRow {
  const at = new Date(now.getTime() - 60 * DAY);
  return {
    id: `loan-${i}`,
    tenantId: TENANT,
    idempotencyKey: `key-${i}`,
    idempotencyScope: "api",
    loanProductId: "product",
    borrowerId: `borrower-${i % 1000}`,
    borrowerRef: `ref-${i % 1000}`,
    borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
    chain: "POLYGON_AMOY",
    mode: "sandbox",
    stablecoin: "USDC",
    principal: 100_000_000n,
    processingFee: 2_000_000n,
    lateFeeType: "FIXED",
    lateFeeValue: 0n,
    dailyLateFee: 0n,
    lateFeeDays: 0,
    paid: 102_000_000n,
    surplus: 0n,
    tenureDays: 7,
    gracePeriodDays: 3,
    status: "REPAID",
    decisionOutcome: "APPROVED",
    decisionReasons: null,
    policyVersion: 1,
    decidedAt: at,
    reviewedBy: null,
    reviewedAt: null,
    reviewNote: null,
    fundingState: "FUNDED",
    requiresKycGate: false,
    kycConfirmedAt: null,
    agreementId: null,
    programId: null,
    channel: null,
    poolId: null,
    fundingTxHash: null,
    fundingFrom: null,
    fundingReservation: 0,
    dueAt: new Date(at.getTime() + 7 * DAY),
    overdueAt: null,
    fundedAt: at,
    repaidAt: new Date(at.getTime() + DAY),
    defaultedAt: null,
    defaultRecordedAt: null,
    writeToken: `token-${i}`,
    fundingRetryMark: null,
    sweepFailedAt: null,
    createdAt: at,
    updatedAt: new Date(at.getTime() + DAY),
  };
}

/** The tenant's history of `size` loans, then what is current (module doc). */
async function seed(size: number): Promise<{ db: Db; close: () => void }> {
  const client = createClient({ url: ":memory:" });
  await migrateLibsql(client, readMigrations());
  await client.execute("PRAGMA foreign_keys = OFF"); // parents (products, borrowers) are not what is read
  const db = createDb(client);
  await client.batch(
    [
      `INSERT INTO tenants (id, name, created_at) VALUES ('${TENANT}', 'History Co', 0)`,
      ...["sandbox", "live"].map(
        (mode) =>
          `INSERT INTO webhook_endpoints (id, tenant_id, url, events, mode, secret_ciphertext, secret_prefix, created_at) VALUES ('ep-${mode}', '${TENANT}', 'https://example.com/${mode}', '["*"]', '${mode}', 'x', 'whsec', 0)`,
      ),
    ],
    "write",
  );
  await db.insert(loans).values(loanRow(0));
  const columns = (await client.execute("SELECT name FROM pragma_table_info('loans') ORDER BY cid")).rows.map((r) => String(r.name));
  const declined = "n.i % 10 = 0";
  const set: Record<string, string> = {
    id: "'loan-' || n.i",
    idempotency_key: "'key-' || n.i",
    write_token: "'token-' || n.i",
    borrower_id: "'borrower-' || (n.i % 1000)",
    borrower_ref: "'ref-' || (n.i % 1000)",
    status: `CASE WHEN ${declined} THEN 'CREATED' ELSE 'REPAID' END`,
    decision_outcome: `CASE WHEN ${declined} THEN 'DECLINED' ELSE 'APPROVED' END`,
    funded_at: `CASE WHEN ${declined} THEN NULL ELSE l.funded_at END`,
    repaid_at: `CASE WHEN ${declined} THEN NULL ELSE l.repaid_at END`,
    created_at: "l.created_at + n.i",
  };
  const counter = (count: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
  const old = now.getTime() - 60 * DAY;
  const envelope = `json_object('id', 'ev-' || n.i, 'type', 'loan.funded', 'tenantId', '${TENANT}', 'mode', 'sandbox', 'createdAt', '2026-01-01T00:00:00.000Z', 'data', json('{}'), 'program', NULL, 'channel', NULL)`;
  await client.batch(
    [
      `${counter(size - 1)} INSERT INTO loans (${columns.join(", ")}) SELECT ${columns.map((c) => set[c] ?? `l.${c}`).join(", ")} FROM n, loans AS l WHERE l.id = 'loan-0'`,
      // Two events per loan, relayed; each with its notification (read) and its delivery (succeeded).
      `${counter(2 * size)} INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at, relayed_at)
         SELECT 'ev-' || n.i, n.i, '${TENANT}', CASE WHEN n.i % 2 THEN 'loan.funded' ELSE 'loan.repaid' END, 'sandbox', 'loan-' || ((n.i - 1) / 2), ${envelope}, ${old} + n.i, ${old} + n.i FROM n`,
      `INSERT INTO notifications (id, tenant_id, event_id, event_type, mode, title, body, read_at, email_status, event_seq, created_at)
         SELECT 'n-' || seq, tenant_id, id, type, mode, 'A loan', 'Its news.', created_at, 'SKIPPED', seq, created_at FROM events`,
      `INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, endpoint_id, mode, status, attempt_count, created_at, updated_at)
         SELECT 'd-' || seq, tenant_id, id, type, 'ep-sandbox', 'sandbox', 'SUCCEEDED', 1, created_at, created_at FROM events`,
    ],
    "write",
  );
  // What is current: the same at every size.
  const today = now.getTime() - 60_000;
  const current = Array.from({ length: 25 }, (_, k) => {
    const row = loanRow(size + k);
    const review = k >= 20;
    return {
      ...row,
      status: review ? ("CREATED" as const) : ("ACTIVE" as const),
      decisionOutcome: review ? ("MANUAL_REVIEW" as const) : ("APPROVED" as const),
      paid: 0n,
      fundedAt: review ? null : new Date(today),
      repaidAt: null,
      fundingState: review ? ("NONE" as const) : ("FUNDED" as const),
      createdAt: new Date(today + k),
      updatedAt: new Date(today + k),
    };
  });
  await db.insert(loans).values(current);
  const seq = 2 * size;
  await client.batch(
    [
      `${counter(13)} INSERT INTO events (id, seq, tenant_id, type, mode, loan_id, envelope, created_at) SELECT 'ev-' || (${seq} + n.i), ${seq} + n.i, '${TENANT}', 'loan.funded', CASE WHEN n.i > 8 THEN 'live' ELSE 'sandbox' END, NULL, ${envelope}, ${today} + n.i FROM n`,
      `INSERT INTO notifications (id, tenant_id, event_id, event_type, mode, title, body, email_status, event_seq, created_at)
         SELECT 'n-' || seq, tenant_id, id, type, mode, 'A loan', 'Its news.', 'SKIPPED', seq, created_at FROM events WHERE seq > ${seq} AND seq <= ${seq + 5}`,
      `INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, endpoint_id, mode, status, attempt_count, created_at, updated_at)
         SELECT 'd-' || seq, tenant_id, id, type, 'ep-' || mode, mode, CASE WHEN mode = 'sandbox' AND seq > ${seq + 5} THEN 'FAILED' ELSE 'SUCCEEDED' END, 3, created_at, created_at FROM events WHERE seq > ${seq}`,
    ],
    "write",
  );
  return { db, close: () => client.close() };
}

/** The reads, each with what it must find (the same at every size: checked, so a fast wrong answer cannot pass). */
const READS: { name: string; run: (db: Db) => Promise<number>; expected: number }[] = [
  {
    name: "GET /v1/stats/today (funded today)",
    run: async (db) => (await todayStats({ db }, { tenantId: TENANT, mode: "sandbox", now })).funded,
    expected: 20,
  },
  {
    name: "unread notifications of a mode",
    run: async (db) =>
      (await listNotifications({ db, secretsKey: DEV_SECRETS_KEY }, { tenantId: TENANT, mode: "sandbox", unread: true, limit: 20 })).data.length,
    expected: 5,
  },
  {
    name: "deliveries of the live mode",
    run: async (db) => (await listDeliveries({ db }, { tenantId: TENANT, mode: "live", limit: 20 })).data.length,
    expected: 5,
  },
  {
    name: "failed deliveries of a mode",
    run: async (db) => (await listDeliveries({ db }, { tenantId: TENANT, mode: "sandbox", status: "FAILED", limit: 20 })).data.length,
    expected: 3,
  },
  {
    name: "live deliveries of an endpoint",
    run: async (db) => (await listDeliveries({ db }, { tenantId: TENANT, endpointId: "ep-live", limit: 20 })).data.length,
    expected: 5,
  },
  {
    name: "failed deliveries of a type",
    run: async (db) => (await listDeliveries({ db }, { tenantId: TENANT, mode: "sandbox", eventType: "loan.funded", status: "FAILED", limit: 20 })).data.length,
    expected: 3,
  },
  {
    name: "review queue (decision=MANUAL_REVIEW)",
    run: async (db) => (await listLoans({ db }, { tenantId: TENANT, filters: { mode: "sandbox", decision: "MANUAL_REVIEW" }, limit: 20 })).data.length,
    expected: 5,
  },
  {
    // Every decision but DECLINED: three exact ranges (listLoans), never a walk past the declined loans.
    name: "CREATED loans of a mode (1 in 10 declined)",
    run: async (db) => (await listLoans({ db }, { tenantId: TENANT, filters: { mode: "sandbox", status: "CREATED" }, limit: 20 })).data.length,
    expected: 5,
  },
  {
    name: "ACTIVE loans, a session (both modes)",
    run: async (db) => (await listLoans({ db }, { tenantId: TENANT, filters: { status: "ACTIVE" }, limit: 50 })).data.length,
    expected: 20,
  },
  {
    name: "a borrower's open loans (creation's count)",
    run: async (db) =>
      Number((await openLoansOfBorrowerQuery(db, { tenantId: TENANT, borrowerId: borrowerIdOfRef(TENANT, "ref-7"), mode: "sandbox" }))[0]?.n ?? -1),
    expected: 0,
  },
  {
    name: "events of a type and mode (a page)",
    run: async (db) => (await listEvents({ db, secretsKey: DEV_SECRETS_KEY }, { tenantId: TENANT, mode: "live", type: "loan.funded", limit: 20 })).data.length,
    expected: 5,
  },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const times = new Map<string, number[]>();
for (const size of SIZES) {
  const started = performance.now();
  const { db, close } = await seed(size);
  console.log(`history of ${size.toLocaleString("en-US")} loans seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const read of READS) {
    const found = await read.run(db);
    if (found !== read.expected) throw new Error(`${read.name} at ${size}: found ${found}, expected ${read.expected}`);
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      await read.run(db);
      samples.push(performance.now() - t0);
    }
    times.set(read.name, [...(times.get(read.name) ?? []), median(samples)]);
  }
  close();
}

const width = Math.max(...READS.map((r) => r.name.length));
console.log(`\nmedian ms per read, history of ${SIZES.map((s) => s.toLocaleString("en-US")).join(" / ")} loans; largest ÷ smallest`);
for (const read of READS) {
  const row = times.get(read.name)!;
  console.log(`${read.name.padEnd(width)}  ${row.map((t) => t.toFixed(3).padStart(8)).join("")}   ${(row[row.length - 1]! / row[0]!).toFixed(2)}×`);
}
console.log("every read found what it must at every size");
