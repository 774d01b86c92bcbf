import { join } from "node:path";
import { type StackLogLevel, startStack } from "../workers/local/stack.ts";
import { REPO_ROOT } from "../workers/local/wrangler-config.ts";
import { MAX_CONTINUATIONS } from "../workers/cron/budget.ts";
import { createDb } from "../db/create-db.ts";
import { DAY_MS } from "../shared/domain/pricing.ts";
import { ledgersToPoll } from "../shared/settlement/listener.ts";
import { advancedDueLoansQuery, dueLoansQuery } from "../shared/sweeps/sweep-loans.ts";
import {
  addBareTenants,
  copyLoans,
  type D1,
  deleteBareTenants,
  deleteCopiesAbove,
  deleteDueCopies,
  loanCounts,
  retryingD1,
  type ScaleTenant,
  seedTenant,
  untilAnswered,
} from "./scale-data.ts";
import type { ScaleRun } from "./scale-worker/index.ts";
import { PROBE_ROUND_TRIPS } from "./scale-worker/probes.ts";

/**
 * `npm run bench:scale`: scale curves of the two cron jobs that read loans in
 * bulk, on the real D1 in Miniflare. The local stack starts with one more,
 * bench-only worker (bench/scale-worker) that runs a single job per request
 * on the cron worker's bindings, so each job is timed alone (not the whole
 * tick), its D1 round trips counted, and its loan writers are the api
 * worker's LoanObjects as in production.
 *
 * Data (bench/scale-data.ts): SCALE_TENANTS sandbox tenants made through the
 * API, each with one loan created, approved and funded by the real code, and
 * its sandbox ledger registered; then that loan copied in bulk (borrower,
 * events, funding settlement) until there are 100, 1,000 and 10,000 ACTIVE
 * loans, due 1 to 91 days from now.
 *
 * At each size it times, as the median of its runs:
 * - one settlement-listener poll with no new transactions, every tenant's
 *   ledger due (`poll_after` set back before each run): ledgersToPoll, then
 *   per ledger its cursor, the simulated chain's head and the saved cursor;
 * - one sweep with 0, 10 and 1,000 loans past due (copies added before the
 *   run, checked marked overdue after it, then deleted); a run stops at its
 *   cap (500 loans) and reports `more`, so a sweep of 1,000 is two runs, as
 *   the tick's continuation makes it, timed together;
 * - D1 itself, as yardsticks: a one-row read and a one-row write.
 * It cycles through the sizes, up and down in turn (copies added, then
 * deleted), SCALE_CYCLES times, so a machine load that changes during the
 * run weighs on every size alike: SCALE_SAMPLES runs of each short
 * measurement per visit, and one sweep of 100 due or more per visit in the
 * first SCALE_BIG_REPS cycles. After each resize, a few unmeasured writes
 * and job runs let the database settle the bulk write. Then, at the largest
 * size, the sweep of nothing due with SCALE_EXTRA_TENANTS more (bare)
 * tenants, then with SCALE_ADVANCED_TENANTS more whose sandbox clock moved a
 * day on, added and deleted in turn: the sweep reads which tenants moved
 * their clock, and their loans on their clock. Times are from this process, request to answer,
 * so they include one request into Miniflare, printed on its own.
 *
 * Env: SCALE_SIZES (100,1000,10000), SCALE_DUE (0,10,1000), SCALE_TENANTS (10),
 * SCALE_CYCLES (6), SCALE_SAMPLES (2), SCALE_BIG_REPS (3), SCALE_EXTRA_TENANTS
 * (10000; 0 skips), SCALE_ADVANCED_TENANTS (1000; 0 skips), SCALE_LOG (error: the stack's log level), SCALE_VERBOSE
 * (print each resize).
 */
const list = (value: string | undefined, fallback: number[]) => (value ? value.split(",").map(Number) : fallback);
const SIZES = list(process.env.SCALE_SIZES, [100, 1_000, 10_000]);
const DUE = list(process.env.SCALE_DUE, [0, 10, 1_000]);
const TENANTS = Number(process.env.SCALE_TENANTS ?? 10);
const CYCLES = Number(process.env.SCALE_CYCLES ?? 6);
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 2);
const BIG_REPS = Math.min(CYCLES, Number(process.env.SCALE_BIG_REPS ?? 3));
const EXTRA_TENANTS = Number(process.env.SCALE_EXTRA_TENANTS ?? 10_000);
const ADVANCED_TENANTS = Number(process.env.SCALE_ADVANCED_TENANTS ?? 1_000);
const WORKER = "svc-credit-bench-scale";
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

for (const size of SIZES) if (size % TENANTS !== 0 || size < TENANTS) throw new Error(`every size must be a multiple of SCALE_TENANTS (${TENANTS})`);

const scriptPath = await buildScaleWorker();
const stack = await startStack({
  configuredWorkers: [{ config: "bench/scale-worker/wrangler.toml", scriptPath }],
  ratelimits: { API_KEY_LIMITER: UNLIMITED, IP_LIMITER: UNLIMITED, TENANT_LIMITER: UNLIMITED, SIGNUP_LIMITER: UNLIMITED },
  logLevel: (process.env.SCALE_LOG as StackLogLevel | undefined) ?? "error",
});
let mismatches = 0;
const check = (ok: boolean, what: string) => {
  if (!ok) {
    mismatches++;
    console.log(`MISMATCH: ${what}`);
  }
};

try {
  const db = retryingD1((await stack.mf.getD1Database("DB", stack.names.api)) as unknown as D1);
  const worker = await stack.mf.getWorker(WORKER);
  const job = async (path: string) => {
    await untilAnswered(async () => (await worker.fetch("http://scale.bench/noop", { method: "POST" })).arrayBuffer());
    const started = performance.now();
    const res = await worker.fetch(`http://scale.bench${path}`, { method: "POST" });
    const body = (await res.json()) as ScaleRun;
    const ms = performance.now() - started;
    if (res.status !== 200 || body.logs.some((l) => l.level === "error")) throw new Error(`${path} failed (${res.status}): ${JSON.stringify(body.logs)}`);
    return { ms, ...body };
  };

  console.log(`scale: ${TENANTS} sandbox tenants through the API…`);
  const tenants: ScaleTenant[] = [];
  for (let i = 0; i < TENANTS; i++) tenants.push(await seedTenant(stack, db, i));
  // The first polls read each ledger's funding transactions and move its cursor to the head.
  await dueLedgers(db);
  await job("/poll");
  await dueLedgers(db);
  const settled = await job("/poll");
  check(!settled.logs.some((l) => l.msg === "settlement listener"), "a ledger still had new transactions after the first poll");
  await job("/sweep");

  /** Every run of each measurement at each size: `poll`, `sweep:<due>`, `request`. */
  const runs = new Map<string, Timed[]>();
  const record = (size: number, name: string, run: Timed) => {
    const key = `${size}:${name}`;
    runs.set(key, [...(runs.get(key) ?? []), run]);
  };
  let copies = 0; // per tenant, besides its template
  let batch = 0;

  /** Adds or deletes copies until there are `size` ACTIVE loans. */
  const resize = async (size: number) => {
    const started = performance.now();
    const want = size / TENANTS - 1; // the template is one of each tenant's loans
    if (want > copies) for (const tenant of tenants) await copyLoans(db, tenant, 0, [copies + 1, want], { due: false, now: Date.now() });
    if (want < copies) await deleteCopiesAbove(db, want);
    copies = want;
    await warmUp();
    const counts = await loanCounts(db);
    check(counts.active === size, `${counts.active} ACTIVE loans, not ${size}`);
    if (process.env.SCALE_VERBOSE)
      console.log(`${size.toLocaleString("en-US")} ACTIVE loans (${counts.total} in all) ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };

  /**
   * A few unmeasured writes and one run of each job after a bulk change: the
   * database settles what the bulk wrote in the first writes after it (its
   * first polls ran up to twice as long), a cost a live database spreads over
   * the writes that brought its loans in one by one.
   */
  const warmUp = async () => {
    for (let i = 0; i < 3; i++) await job("/probe/write");
    await dueLedgers(db);
    await job("/poll");
    await job("/sweep");
  };

  const poll = async (size: number) => {
    await dueLedgers(db);
    const run = await job("/poll");
    check(!run.logs.some((l) => l.msg === "settlement listener"), `a poll at ${size} found new transactions`);
    const polled = await db.prepare("SELECT COUNT(*) AS c FROM sandbox_ledgers WHERE poll_after > ?").bind(Date.now()).first<{ c: number }>();
    check(polled?.c === TENANTS, `the poll at ${size} left ${TENANTS - (polled?.c ?? 0)} of ${TENANTS} ledgers unpolled`);
    record(size, "poll", run);
  };

  /** `due` loans past due (spread over the tenants), one sweep, each checked marked overdue, then deleted. */
  const sweep = async (size: number, due: number) => {
    batch++;
    const now = Date.now();
    for (const tenant of tenants) {
      const share = Math.floor(due / TENANTS) + (tenant.index < due % TENANTS ? 1 : 0);
      if (share > 0) await copyLoans(db, tenant, batch, [1, share], { due: true, now });
    }
    // A run stops at its cap (workers/cron/budget.ts, SWEEP_PAGES_PER_RUN pages) and reports `more`; the
    // tick's continuations then run the job again, so a sweep of more than a run's worth is that many runs.
    const total = { ms: 0, d1Ms: 0, roundTrips: 0, visited: 0, failed: 0, runs: 0 };
    for (let more = true; more && total.runs <= 1 + MAX_CONTINUATIONS; ) {
      const run = await job("/sweep");
      const swept = run.logs.find((l) => l.msg === "loans swept")?.fields as { visited: number; failed: number; more?: boolean } | undefined;
      total.ms += run.ms;
      total.d1Ms += run.d1Ms;
      total.roundTrips += run.roundTrips;
      total.visited += swept?.visited ?? 0;
      total.failed += swept?.failed ?? 0;
      total.runs++;
      more = swept?.more === true;
    }
    const run = total;
    check(total.visited === due && total.failed === 0, `a sweep of ${due} due at ${size} visited ${JSON.stringify(total)}`);
    const marked = (await loanCounts(db)).dueMarked;
    check(marked === due, `a sweep of ${due} due at ${size} marked ${marked} overdue`);
    await deleteDueCopies(db);
    record(size, `sweep:${due}`, run);
  };

  // Cycles through the sizes, up then down then up…, one visit to each size per cycle: a
  // machine load that changes during the run weighs on every size alike. Each visit takes
  // SAMPLES of every short measurement; the first BIG_REPS cycles also one long sweep.
  const short = DUE.filter((d) => d < 100);
  const long = DUE.filter((d) => d >= 100);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    for (const size of cycle % 2 === 0 ? SIZES : [...SIZES].reverse()) {
      await resize(size);
      for (let i = 0; i < SAMPLES; i++) {
        record(size, "request", await job("/noop"));
        for (const probe of ["read", "write"]) {
          const run = await job(`/probe/${probe}`);
          record(size, `probe:${probe}`, { ms: run.ms / PROBE_ROUND_TRIPS, d1Ms: 0, roundTrips: 1 });
        }
        await poll(size);
        for (const due of short) await sweep(size, due);
      }
      if (cycle < BIG_REPS) for (const due of long) await sweep(size, due);
    }
    console.log(`cycle ${cycle + 1} of ${CYCLES} done`);
  }
  // Tenants: the sweep also finds the tenants whose sandbox clock moved, and their due loans.
  // At the largest size, more tenants (bare signups: clock not moved, or moved a day on)
  // added and deleted again, in turn; each time a sweep with nothing due.
  const largest = SIZES.at(-1)!;
  const extras = [
    { name: "tenants", count: EXTRA_TENANTS, offsetMs: 0 },
    { name: "tenants whose sandbox clock moved", count: ADVANCED_TENANTS, offsetMs: DAY_MS },
  ].filter((e) => e.count > 0);
  const tenantRuns = new Map<string, Timed[]>();
  if (extras.length > 0) await resize(largest);
  for (const extra of extras) {
    for (let cycle = 0; cycle < CYCLES / 2; cycle++) {
      for (const added of cycle % 2 === 0 ? [false, true] : [true, false]) {
        if (added) await addBareTenants(db, tenants[0]!, extra.count, extra.offsetMs);
        await warmUp();
        for (let i = 0; i < SAMPLES; i++) {
          const run = await job("/sweep");
          check(!run.logs.some((l) => l.msg === "loans swept"), "a sweep with nothing due visited loans");
          const key = `${extra.name}:${added}`;
          tenantRuns.set(key, [...(tenantRuns.get(key) ?? []), run]);
        }
        if (added) await deleteBareTenants(db);
      }
    }
  }

  const rows = SIZES.map((size) => ({
    size,
    read: medianOf(runs.get(`${size}:probe:read`)!),
    write: medianOf(runs.get(`${size}:probe:write`)!),
    poll: medianOf(runs.get(`${size}:poll`)!),
    sweeps: new Map(DUE.map((d) => [d, medianOf(runs.get(`${size}:sweep:${d}`)!)])),
  }));
  const request = SIZES.flatMap((size) => runs.get(`${size}:request`)!.map((r) => r.ms));

  await printPlans(db);
  printTable(rows, median(request));
  for (const extra of extras) {
    const [without, added] = [false, true].map((a) => medianOf(tenantRuns.get(`${extra.name}:${a}`)!));
    console.log(
      `sweep of 0 due at ${largest.toLocaleString("en-US")} active loans: ${without!.ms.toFixed(1)} ms (${without!.roundTrips} D1 round trips); ` +
        `with ${extra.count.toLocaleString("en-US")} more ${extra.name}: ${added!.ms.toFixed(1)} ms (${added!.roundTrips} round trips), ` +
        `${(added!.ms / without!.ms).toFixed(2)}× (median of ${tenantRuns.get(`${extra.name}:false`)!.length} runs each)`,
    );
  }
} finally {
  await stack.dispose();
}
if (mismatches > 0) process.exitCode = 1;

/** Every bench ledger due now, as a sandbox helper's write leaves it. */
async function dueLedgers(db: D1) {
  await db.prepare("UPDATE sandbox_ledgers SET poll_after = 0").run();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median time, D1 time and round trips (the same in every run) of `runs`. */
function medianOf(runs: Timed[]): Timed {
  return { ms: median(runs.map((r) => r.ms)), d1Ms: median(runs.map((r) => r.d1Ms)), roundTrips: median(runs.map((r) => r.roundTrips)) };
}

/** The reads that must not grow with active loans (or tenants), as the real D1 plans them. */
async function printPlans(db: D1) {
  const drizzle = createDb(db);
  const queries = {
    ledgersToPoll: ledgersToPoll(drizzle, new Date(), 100).toSQL(),
    dueLoansQuery: dueLoansQuery(drizzle, Date.now()).toSQL(),
    advancedDueLoansQuery: advancedDueLoansQuery(drizzle, Date.now()).toSQL(),
  };
  console.log("\nquery plans (EXPLAIN QUERY PLAN on D1):");
  for (const [name, q] of Object.entries(queries)) {
    try {
      const plan = await db
        .prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      console.log(`  ${name}: ${plan.results.map((r) => r.detail).join("; ")}`);
    } catch (error) {
      console.log(`  ${name}: D1 refused EXPLAIN (${error instanceof Error ? error.message : String(error)})`);
    }
  }
}

type Timed = { ms: number; d1Ms: number; roundTrips: number };
type Row = { size: number; read: Timed; write: Timed; poll: Timed; sweeps: Map<number, Timed> };

function printTable(rows: Row[], requestMs: number) {
  const fmt = (ms: number) => ms.toFixed(1);
  const columns: { name: string; of: (r: Row) => number }[] = [
    { name: "D1 read", of: (r) => r.read.ms },
    { name: "D1 write", of: (r) => r.write.ms },
    { name: "poll", of: (r) => r.poll.ms },
    ...DUE.map((d) => ({ name: `sweep ${d.toLocaleString("en-US")} due`, of: (r: Row) => r.sweeps.get(d)!.ms })),
  ];
  const line = (first: string, cells: string[]) =>
    console.log([first.padStart(12), ...cells.map((c, i) => c.padStart(Math.max(9, columns[i]!.name.length)))].join(" "));
  console.log(
    `\nscale curves, ms: the median of ${CYCLES * SAMPLES} runs (${CYCLES} visits to each size, sizes visited up and down in turn; ${BIG_REPS} runs for 100 due or more), ` +
      `${TENANTS} tenants, every ledger due at each poll; D1 read/write: one round trip`,
  );
  line(
    "active loans",
    columns.map((c) => c.name),
  );
  for (const r of rows)
    line(
      r.size.toLocaleString("en-US"),
      columns.map((c) => fmt(c.of(r))),
    );
  const first = rows[0]!;
  const last = rows.at(-1)!;
  if (rows.length > 1) {
    line(
      `${last.size.toLocaleString("en-US")}/${first.size.toLocaleString("en-US")}`,
      columns.map((c) => `${(c.of(last) / c.of(first)).toFixed(2)}×`),
    );
  }
  console.log(
    `D1 round trips of the job itself: poll ${rows.map((r) => r.poll.roundTrips).join("/")}, ` +
      DUE.map((d) => `sweep ${d} due ${rows.map((r) => r.sweeps.get(d)!.roundTrips).join("/")}`).join(", ") +
      ` (at ${rows.map((r) => r.size.toLocaleString("en-US")).join("/")} active; each due loan's sweep runs in its LoanObject, not counted)`,
  );
  console.log(`one request into Miniflare (included in every time above): ${fmt(requestMs)} ms`);
  // D1's own round trip varies with the machine's load; the jobs' round-trip counts do not.
  console.log(
    `the same in D1 reads (÷ the D1 read at the same size): poll ${rows.map((r) => (r.poll.ms / r.read.ms).toFixed(1)).join("/")}` +
      (DUE.includes(0) ? `, sweep of 0 due ${rows.map((r) => (r.sweeps.get(0)!.ms / r.read.ms).toFixed(1)).join("/")}` : ""),
  );
  const bigDue = DUE.filter((d) => d > 0).at(-1);
  if (bigDue && DUE.includes(0)) {
    const perLoan = rows.map((r) => `${fmt((r.sweeps.get(bigDue)!.ms - r.sweeps.get(0)!.ms) / bigDue)} ms`).join("/");
    console.log(`sweep per due loan (${bigDue.toLocaleString("en-US")} due, over the 0-due sweep): ${perLoan}`);
  }
  if (rows.length > 1) {
    const verdict = (name: string, a: number, b: number) => console.log(`${name}: ${(a / b).toFixed(2)}× (target ≤ 1.5×) ${a <= 1.5 * b ? "met" : "NOT MET"}`);
    verdict(`poll at ${last.size.toLocaleString("en-US")} / at ${first.size.toLocaleString("en-US")}`, last.poll.ms, first.poll.ms);
    if (DUE.includes(0))
      verdict(
        `sweep of 0 due at ${last.size.toLocaleString("en-US")} / at ${first.size.toLocaleString("en-US")}`,
        last.sweeps.get(0)!.ms,
        first.sweeps.get(0)!.ms,
      );
  }
}

/** bench/scale-worker bundled as `wrangler deploy --dry-run` bundles the others, into dist/bench-scale. */
async function buildScaleWorker(): Promise<string> {
  const outDir = join(REPO_ROOT, "dist", "bench-scale");
  const proc = Bun.spawn(
    [join(REPO_ROOT, "node_modules", ".bin", "wrangler"), "deploy", "--dry-run", "--outdir", outDir, "--config", "bench/scale-worker/wrangler.toml"],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", WRANGLER_HIDE_BANNER: "true" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`building bench/scale-worker failed (exit ${code}):\n${stdout}\n${stderr}`);
  return join(outDir, "index.js");
}
