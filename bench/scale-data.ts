import { DAY_MS } from "../shared/domain/pricing.ts";
import type { Stack } from "../workers/local/stack.ts";

/**
 * The scale bench's data: a few sandbox tenants made through the API (signup,
 * API key, one loan created, approved and funded), then each tenant's loan
 * copied in bulk, in one INSERT … SELECT per table and tenant, with its
 * borrower, its events and its funding settlement. A copy differs from its
 * template in its ids, idempotency key, borrower, write token, funding hash
 * and times: ACTIVE loans due 1 to 91 days from now, or (`due`) past due by
 * an hour and inside a 3-day grace, so the sweep marks each one overdue.
 */

export type D1 = D1Database;

/** `call` again while it fails with ECONNRESET, at most 5 times. */
export async function untilAnswered<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 5 || !String(error).includes("ECONNRESET")) throw error;
      await Bun.sleep(50);
    }
  }
}

/**
 * Miniflare's D1 proxy (`mf.getD1Database`) as the bench uses it: prepare,
 * bind, run, first, all, raw and batch, each call made again on ECONNRESET.
 * The proxy's sockets idle through a long job are closed by the other side,
 * and the next call on one fails before it is sent (even `prepare`, which
 * crosses the proxy too): so a statement here only records its query and
 * arguments, and is prepared afresh by each attempt.
 */
export function retryingD1(db: D1Database): D1Database {
  const real = (query: string, args: unknown[]) => (args.length > 0 ? db.prepare(query).bind(...args) : db.prepare(query));
  const recorded = new WeakMap<object, { query: string; args: unknown[] }>();
  const statement = (query: string, args: unknown[]) => {
    const s = {
      bind: (...next: unknown[]) => statement(query, next),
      first: (column?: string) => untilAnswered(() => (column === undefined ? real(query, args).first() : real(query, args).first(column))),
      all: () => untilAnswered(() => real(query, args).all()),
      run: () => untilAnswered(() => real(query, args).run()),
      raw: () => untilAnswered(() => real(query, args).raw()),
    };
    recorded.set(s, { query, args });
    return s as unknown as D1PreparedStatement;
  };
  const original = (s: D1PreparedStatement) => {
    const r = recorded.get(s);
    return r ? real(r.query, r.args) : s;
  };
  return {
    prepare: (query: string) => statement(query, []),
    batch: (statements: D1PreparedStatement[]) => untilAnswered(() => db.batch(statements.map(original))),
    exec: (query: string) => untilAnswered(() => db.exec(query)),
    dump: () => db.dump(),
    withSession: (constraint?: string) => db.withSession(constraint),
  } as D1Database;
}

/** A tenant of the bench: its template loan is ACTIVE and funded by the real code. */
export type ScaleTenant = { index: number; tenantId: string; templateLoanId: string; apiKey: string };

const post = (baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

async function expectStatus(res: Response, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** Signup → API key → one loan through `POST /v1/loans`; its ledger registered as a sandbox helper's write would. */
export async function seedTenant(stack: Stack, db: D1, index: number): Promise<ScaleTenant> {
  const { baseUrl } = stack;
  const signup = await expectStatus(
    await post(baseUrl, "/v1/auth/signup", {
      email: `scale-${index}-${crypto.randomUUID()}@example.com`,
      password: "bench-password-long-enough",
      companyName: `Scale ${index}`,
    }),
    201,
    "signup",
  );
  const key = await expectStatus(
    await post(baseUrl, "/v1/api-keys", { name: "scale" }, { authorization: `Bearer ${signup.accessToken}` }),
    201,
    "POST /v1/api-keys",
  );
  const apiKey = String(key.key);
  const headers = { "x-api-key": apiKey };
  const me = (await (await fetch(`${baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string }; merchantConfigs: { loanProductId: string }[] };
  const loan = await expectStatus(
    await post(
      baseUrl,
      "/v1/loans",
      {
        loanProductId: me.merchantConfigs[0]!.loanProductId,
        borrowerRef: `scale-template-${index}`,
        borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        chain: "POLYGON_AMOY",
        principalAmount: "10.00",
        idempotencyKey: `scale-template-${index}`,
      },
      headers,
    ),
    201,
    "POST /v1/loans",
  );
  const row = await db.prepare("SELECT status, chain FROM loans WHERE id = ?").bind(loan.id).first<{ status: string; chain: string }>();
  if (row?.status !== "ACTIVE") throw new Error(`the template loan ${loan.id} is ${row?.status}, not ACTIVE`);
  const now = Date.now();
  await db
    .prepare("INSERT INTO sandbox_ledgers (tenant_id, chain, last_block, poll_after, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(me.tenant.id, row.chain, now, now, now)
    .run();
  return { index, tenantId: me.tenant.id, templateLoanId: String(loan.id), apiKey };
}

const columns = new Map<string, string[]>();
async function columnsOf(db: D1, table: string): Promise<string[]> {
  let names = columns.get(table);
  if (!names) {
    names = (await db.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid").bind(table).all<{ name: string }>()).results.map((r) => r.name);
    if (names.length === 0) throw new Error(`no table ${table}`);
    columns.set(table, names);
  }
  return names;
}

/** Copies `from` rows (aliased `t`, chosen by `where`) once per n in [first, last], with `set` overriding columns (SQL over t and n). */
async function copyRows(db: D1, table: string, where: string, args: unknown[], [first, last]: [number, number], set: Record<string, string>) {
  if (last < first) return 0;
  const names = await columnsOf(db, table);
  const unknown = Object.keys(set).filter((c) => !names.includes(c));
  if (unknown.length > 0) throw new Error(`${table} has no column ${unknown.join(", ")}`);
  const sql =
    `WITH RECURSIVE seq(n) AS (SELECT ${first} UNION ALL SELECT n + 1 FROM seq WHERE n < ${last}) ` +
    `INSERT INTO ${table} (${names.join(", ")}) SELECT ${names.map((c) => set[c] ?? `t.${c}`).join(", ")} FROM seq, ${table} AS t WHERE ${where}`;
  return (
    await db
      .prepare(sql)
      .bind(...args)
      .run()
  ).meta.changes;
}

const KIND = { loan: 1, borrower: 2, event: 3, settlement: 4, tenant: 5 } as const;

/** A UUID-shaped id, unique per kind, tenant, batch, copy number n and `rank` (an event's place in its loan). */
const idOf = (kind: keyof typeof KIND, tenant: number, batch: number, rank = "0") =>
  `printf('%08x-%04x-4000-8000-%012x', ${(KIND[kind] << 28) | (tenant << 20) | batch}, ${rank}, n)`;

/**
 * Copies tenant's template loan as copies n = first…last of `batch`: loans,
 * borrowers, events (relayed) and settlements. `due`: past due by an hour
 * (plus n seconds), grace 3 days, not yet overdue; otherwise due 1 to 91 days
 * from now. Answers how many loans it wrote.
 */
export async function copyLoans(db: D1, tenant: ScaleTenant, batch: number, range: [number, number], options: { due: boolean; now: number }) {
  const { now, due } = options;
  const loanId = idOf("loan", tenant.index, batch);
  const ref = `printf('${due ? "scale-due" : "scale"}-%07d-t%d-b%d', n, ${tenant.index}, ${batch})`;
  const dueAt = due ? `${now} - 3600000 - n * 1000` : `${now} + ${DAY_MS} * (1 + (n * 7919) % 90) + (n * 104729) % ${DAY_MS}`;
  // Funded a tenure before it falls due (a copy never funded in the future).
  const fundedAt = `MIN(${now} - 60000, ${dueAt} - t.tenure_days * ${DAY_MS})`;
  const template = [tenant.templateLoanId];
  await copyRows(db, "borrowers", "t.id = (SELECT borrower_id FROM loans WHERE id = ?)", template, range, {
    id: idOf("borrower", tenant.index, batch),
    borrower_ref: ref,
    created_at: `${now} - ${DAY_MS} * (1 + n % 60)`,
    updated_at: `${now} - 60000`,
  });
  const loans = await copyRows(db, "loans", "t.id = ?", template, range, {
    id: loanId,
    idempotency_key: ref,
    borrower_id: idOf("borrower", tenant.index, batch),
    borrower_ref: ref,
    funding_tx_hash: "'0x' || lower(hex(randomblob(32)))",
    write_token: "lower(hex(randomblob(16)))",
    due_at: dueAt,
    grace_period_days: due ? "3" : "t.grace_period_days",
    late_fee_days: "0",
    overdue_at: "NULL",
    decided_at: fundedAt,
    funded_at: fundedAt,
    created_at: fundedAt,
    updated_at: fundedAt,
  });
  const perLoan = (await db.prepare("SELECT COUNT(*) AS c FROM events WHERE loan_id = ?").bind(tenant.templateLoanId).first<{ c: number }>())?.c ?? 0;
  const base = (await db.prepare("SELECT COALESCE(MAX(seq), 0) AS m FROM events").first<{ m: number }>())?.m ?? 0;
  const rank = "(SELECT COUNT(*) FROM events AS e WHERE e.tenant_id = t.tenant_id AND e.loan_id = t.loan_id AND e.seq < t.seq)";
  await copyRows(db, "events", "t.loan_id = ?", template, range, {
    id: idOf("event", tenant.index, batch, rank),
    seq: `${base + 1} + (n - ${range[0]}) * ${perLoan} + ${rank}`,
    loan_id: loanId,
    relayed_at: "COALESCE(t.relayed_at, t.created_at)",
  });
  await copyRows(db, "settlements", "t.loan_id = ?", template, range, {
    id: idOf("settlement", tenant.index, batch),
    loan_id: loanId,
    tx_hash: "'0x' || lower(hex(randomblob(32)))",
  });
  return loans;
}

/** Copies numbered above `keep` (of every tenant), with their borrowers, events and settlements: back to `keep` copies per tenant. */
export async function deleteCopiesAbove(db: D1, keep: number) {
  const above = "idempotency_key GLOB 'scale-[0-9]*' AND idempotency_key >= ?";
  const from = `scale-${String(keep + 1).padStart(7, "0")}`;
  await db.batch([
    db.prepare(`DELETE FROM events WHERE loan_id IN (SELECT id FROM loans WHERE ${above})`).bind(from),
    db.prepare(`DELETE FROM settlements WHERE loan_id IN (SELECT id FROM loans WHERE ${above})`).bind(from),
    db.prepare(`DELETE FROM loans WHERE ${above}`).bind(from),
    db.prepare(`DELETE FROM borrowers WHERE ${above.replaceAll("idempotency_key", "borrower_ref")}`).bind(from),
  ]);
}

/**
 * `count` more tenants, each a copy of `tenant`'s row alone (no users, loans
 * or ledgers: signups that never went further), their sandbox clock moved
 * `clockOffsetMs` on.
 */
export async function addBareTenants(db: D1, tenant: ScaleTenant, count: number, clockOffsetMs: number) {
  return copyRows(db, "tenants", "t.id = ?", [tenant.tenantId], [1, count], {
    id: idOf("tenant", 0, 0),
    name: "'scale-bare-' || n",
    clock_offset_ms: String(clockOffsetMs),
  });
}

export async function deleteBareTenants(db: D1) {
  await db.prepare("DELETE FROM tenants WHERE name GLOB 'scale-bare-*'").run();
}

/** Deletes the past-due copies (`copyLoans(…, { due: true })`) and what hangs off them. */
export async function deleteDueCopies(db: D1) {
  const due = "SELECT id FROM loans WHERE idempotency_key LIKE 'scale-due-%'";
  await db.batch([
    db.prepare(`DELETE FROM events WHERE loan_id IN (${due})`),
    db.prepare(`DELETE FROM settlements WHERE loan_id IN (${due})`),
    db.prepare("DELETE FROM loans WHERE idempotency_key LIKE 'scale-due-%'"),
    db.prepare("DELETE FROM borrowers WHERE borrower_ref LIKE 'scale-due-%'"),
  ]);
}

/** Loans by status, and how many of the past-due copies the sweep marked overdue. */
export async function loanCounts(db: D1) {
  const active = (await db.prepare("SELECT COUNT(*) AS c FROM loans WHERE status = 'ACTIVE'").first<{ c: number }>())?.c ?? 0;
  const dueMarked =
    (await db.prepare("SELECT COUNT(*) AS c FROM loans WHERE idempotency_key LIKE 'scale-due-%' AND overdue_at IS NOT NULL").first<{ c: number }>())?.c ?? 0;
  const total = (await db.prepare("SELECT COUNT(*) AS c FROM loans").first<{ c: number }>())?.c ?? 0;
  return { active, dueMarked, total };
}
