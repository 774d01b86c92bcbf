import autocannon, { type Options, type Result } from "autocannon";
import { ROUND_TRIPS_HEADER, type RoundTripCounter } from "../shared/observability/round-trips.ts";
import type { DeliveryMessage } from "../shared/webhooks/messages.ts";
import { startStack, type Stack } from "../workers/local/stack.ts";
import { childWorkerdPids, cpuMillis, sampleMemory } from "./memory.ts";
import { STEADY_IN_FLIGHT, steadyLoans } from "./steady-loans.ts";
import { deliveryBurst } from "./delivery-burst.ts";
import { probeWorker } from "./probes.ts";
import { copyLoans, retryingD1 } from "./scale-data.ts";
import { signedReceiver } from "./signed-receiver.ts";

/**
 * `npm run bench`: the bundled workers in Miniflare (in memory), load from
 * autocannon over 127.0.0.1. Not a test: it prints numbers to compare runs.
 * The rate limits are raised far above what the bench can send, so it measures
 * the handlers (auth, D1 lookups), not 429s.
 *
 * Limit probes: a probe worker in the same Miniflare (bench/probe-worker.ts,
 * never deployed) does one platform operation per request: nothing
 * (`/probe/noop`), one D1 read by primary key, one one-row D1 insert, one
 * Durable Object RPC, one Queue send. Each endpoint is printed as a ratio to
 * its probe, measured in the same run at the same concurrency, just before
 * it: `/v1/health` to the no-op, `/v1/me` to the read, `POST /v1/loans` to
 * the write, webhook events/s to the Queue send.
 *
 * Round trips: the workers run with COUNT_ROUND_TRIPS=1 (development only),
 * so the api answers a request that asks (`x-round-trips: 1`) with its D1
 * round trips and Durable Object calls, its loan objects' included
 * (`x-round-trips`, shared/observability/round-trips.ts). The timed runs do
 * not ask (counting costs CPU of its own); after each, a few requests one
 * after another do, and the bench averages them per answer.
 * The outbox relay that runs after a write's response (`waitUntil`) is not in
 * the count.
 *
 * The loan benchmark posts `POST /v1/loans` with a fresh `idempotencyKey` per
 * request, so every request creates, underwrites (default policy: APPROVED)
 * and funds a loan on the simulated chain, then checks in D1 that every loan
 * it created ended ACTIVE. Meanwhile it samples the resident memory of the
 * stack (the workerd process) and of the bench itself.
 *
 * The delivery benchmark runs first, on an idle queue: a fresh tenant
 * registers an endpoint (`["*"]`) on a receiver in this process; a few loans
 * one by one give the delay of an idle pipeline, then up to
 * BENCH_DELIVERY_LOANS loans one after another for at most BENCH_SECONDS
 * load it. It prints events/s from outbox to receiver (events delivered over
 * the time from the first commit to the last arrival) and the delay from
 * commit (the envelope's `createdAt`) to arrival, p50/p99/max, and checks
 * that every event arrived once with a valid `x-svc-signature`. The loan
 * benchmark also checks that the cron relay leaves none of its events in the
 * outbox.
 *
 * Then a burst (bench/delivery-burst.ts): BENCH_BURST_EVENTS events
 * committed at once in a tenant of their own, relayed after one write,
 * timed from commit to arrival; and the same burst again, by another tenant,
 * while the first tenant creates loans one after another (the burst and the
 * loans' own events both timed); then again beside steady loan rates
 * (BENCH_LOAD_RATES loans/s, an open loop: a loan started every 1/rate s
 * whatever the answers), a curve of what the pipeline carries beside a given
 * load rather than beside one that takes all the CPU it can. The burst alone
 * and the capacity run also print the stack's CPU per event.
 *
 * The load's requests accept compressed answers (`accept-encoding: gzip,
 * deflate, br`), as fetch, undici's fetch, browsers and most HTTP libraries
 * send. Without it, local workerd answers with a `Content-Length` body, and
 * while its one thread is saturated, some keep-alive connections' next
 * requests sat unread in their sockets for up to 3.8 s (`ss` showed the
 * request in the socket's Recv-Q, and the api stamped its arrival that much
 * after autocannon sent it) while the other connections went on at the full
 * rate: a pause of workerd's local HTTP server, not of the handlers, and not
 * one Cloudflare's front end has. `BENCH_ACCEPT_ENCODING=identity` brings it
 * back (bench/HISTORY.md).
 *
 * Env: BENCH_SECONDS (10 per endpoint), BENCH_CONNECTIONS (10), BENCH_DELIVERY_LOANS (200), BENCH_BURST_EVENTS (600),
 * BENCH_LOAD_RATES (`10,25,50`; empty: none), BENCH_ACCEPT_ENCODING (`gzip, deflate, br`),
 * BENCH_LOAN_HISTORY (0: the ACTIVE loans the bench tenant holds before its loans are timed, see loadLoanHistory).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** What the load's requests accept (see above): compressed answers, as common HTTP clients do. */
const acceptEncoding = process.env.BENCH_ACCEPT_ENCODING ?? "gzip, deflate, br";
/** How many requests, one after another, each api path is sampled with for its round trips (after its timed run). */
const TRIP_SAMPLES = 20;
/** Requests of the new-object probe (`POST /probe/do`), each making a Durable Object. */
const NEW_OBJECTS = 2_000;
const only = process.env.BENCH_ONLY?.split(",");
const emptyTrips = { answers: 0, d1: 0, doCalls: 0, objectD1: 0, objectDoCalls: 0 };
const emptyResult = { requests: { average: 0, total: 0 }, latency: { p50: 0, p99: 0 }, "2xx": 0, non2xx: 0, errors: 0, timeouts: 0 } as unknown as Result;
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

/** autocannon's `requests` with `setupRequest` and `onResponse` (in the package, not yet in bench/autocannon.d.ts). */
type BenchRequest = { method: string; path: string; headers: Record<string, string>; body?: string };
const autocannonWithRequests = autocannon as unknown as (
  options: Options & {
    requests: (Partial<BenchRequest> & {
      setupRequest?: (req: BenchRequest) => BenchRequest;
      onResponse?: (status: number, body: string, context: unknown, headers: Record<string, string | string[]>) => void;
    })[];
  },
) => Promise<Result>;

/** The `x-round-trips` answers of one run, summed. */
type Trips = { answers: number; d1: number; doCalls: number; objectD1: number; objectDoCalls: number };

/** One load run: autocannon's result, the round trips its 2xx answers reported (none for the probes), and the stack's CPU time over it. */
type Measured = { name: string; result: Result; trips: Trips; sampled: number; cpuMs: number; probe?: string };

const stack = await startStack({
  ratelimits: { API_KEY_LIMITER: UNLIMITED, IP_LIMITER: UNLIMITED, TENANT_LIMITER: UNLIMITED, SIGNUP_LIMITER: UNLIMITED },
  vars: { COUNT_ROUND_TRIPS: process.env.BENCH_COUNT === "0" ? "0" : "1" },
  extraWorkers: [probeWorker()],
  logLevel: "error",
});
try {
  const workerd = childWorkerdPids();
  const deliveries = only && !only.includes("webhook") ? undefined : await benchDeliveries(stack, () => cpuMillis(workerd));
  const runs: Measured[] = [];
  const run = async (
    name: string,
    path: string,
    options: { method?: string; headers?: Record<string, string>; body?: () => string; probe?: string; amount?: number } = {},
  ) => {
    if (only && !only.some((o) => name.includes(o))) return { name, result: emptyResult, trips: emptyTrips, sampled: 0, cpuMs: 0 };
    console.log(`${name}: ${options.amount ? `${options.amount} requests` : `${seconds} s`}, ${connections} connections…`);
    const cpuBefore = cpuMillis(workerd);
    // The api's paths sample their round trips; the probes have none to count.
    const loaded = await load(stack, path, { ...options, countTrips: path.startsWith("/v1/") });
    const measured = { name, ...loaded, cpuMs: cpuMillis(workerd) - cpuBefore, probe: options.probe };
    runs.push(measured);
    return measured;
  };

  await run("GET /probe/noop", "/probe/noop");
  await run("GET /v1/health", "/v1/health", { probe: "GET /probe/noop" });
  const apiKey = await createApiKey(stack.baseUrl);
  let loans: Awaited<ReturnType<typeof benchLoanCreation>> | undefined;
  if (apiKey) {
    const headers = { "x-api-key": apiKey };
    const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string } };
    await run("GET /probe/read", `/probe/read?id=${me.tenant.id}`);
    await run("GET /v1/me (x-api-key)", "/v1/me", { headers, probe: "GET /probe/read" });
    await run("POST /probe/write", "/probe/write", { method: "POST" });
    loans = await benchLoanCreation(stack, apiKey, run);
    // A loan's platform work with nothing around it (bench/probe-worker.ts), against which the loans' rate is also printed.
    await run("POST /probe/loans", `/probe/loans?id=${me.tenant.id}`, { method: "POST" });
  }
  // A new object each time: workerd runs out of memory for their storage after about 3,500 new objects in
  // one process (SQLITE_NOMEM), so this probe makes a fixed number of them rather than running for a time.
  await run("POST /probe/do", "/probe/do", { method: "POST", amount: NEW_OBJECTS });
  await run("POST /probe/queue", "/probe/queue", { method: "POST" });

  const byName = new Map(runs.map((r) => [r.name, r]));
  const perSecond = (r: Result) => r.requests.average;
  console.log();
  console.log(
    [
      "endpoint".padEnd(24),
      "req/s".padStart(8),
      "p50 ms".padStart(7),
      "p99 ms".padStart(7),
      "2xx".padStart(7),
      "non-2xx".padStart(8),
      "errors".padStart(7),
      "cpu ms".padStart(7),
      "  vs probe".padEnd(20),
      "ratio".padStart(6),
    ].join(" "),
  );
  for (const { name, result: r, probe, cpuMs } of runs) {
    const against = probe ? byName.get(probe) : undefined;
    console.log(
      [
        name.padEnd(24),
        perSecond(r).toFixed(0).padStart(8),
        String(r.latency.p50).padStart(7),
        String(r.latency.p99).padStart(7),
        String(r["2xx"]).padStart(7),
        String(r.non2xx).padStart(8),
        String(r.errors + r.timeouts).padStart(7),
        (cpuMs / Math.max(1, r.requests.total)).toFixed(2).padStart(7),
        `  ${probe ?? ""}`.padEnd(20),
        (against ? (perSecond(r) / perSecond(against.result)).toFixed(2) : "").padStart(6),
      ].join(" "),
    );
  }
  const queueProbe = byName.get("POST /probe/queue");
  if (deliveries && queueProbe) {
    console.log(
      `${"webhook events (loaded)".padEnd(24)} ${deliveries.perSecond.toFixed(0).padStart(8)} ${"".padStart(54)}   ${"POST /probe/queue".padEnd(18)}${(deliveries.perSecond / perSecond(queueProbe.result)).toFixed(2).padStart(6)}`,
    );
    for (const [label, burst] of [
      ["webhook events (burst)", deliveries.burst],
      ["burst under load", deliveries.underLoad?.burst],
    ] as const) {
      if (!burst) continue;
      console.log(
        `${label.padEnd(24)} ${burst.perSecond.toFixed(0).padStart(8)} ${"".padStart(54)}   ${"POST /probe/queue".padEnd(18)}${(burst.perSecond / perSecond(queueProbe.result)).toFixed(2).padStart(6)}`,
      );
    }
  }

  console.log("cpu ms: the stack's (workerd's) CPU time over the run, per answer; ratio: req/s over the probe's req/s");
  console.log("\nround trips per 2xx answer (x-round-trips, sampled after the timed run; the relay after a write's response not included):");
  for (const { name, trips: t } of runs) {
    if (t.answers === 0) continue;
    const avg = (n: number) => (n / t.answers).toFixed(2);
    console.log(
      `  ${name.padEnd(24)} D1 ${avg(t.d1 + t.objectD1)} (api ${avg(t.d1)}, Durable Objects ${avg(t.objectD1)}); ` +
        `Durable Object calls ${avg(t.doCalls + t.objectDoCalls)} (api ${avg(t.doCalls)}, from Durable Objects ${avg(t.objectDoCalls)}); over ${t.answers} answers`,
    );
  }

  if (loans) {
    const l = loans.measured.result;
    const loansPerSecond = l["2xx"] / (l.duration || seconds);
    const held = loans.history > 0 ? `, by a tenant already holding ${loans.history.toLocaleString("en-US")} ACTIVE loans` : "";
    console.log(
      `\nloans created and funded: ${loansPerSecond.toFixed(0)} loans/s (p50 ${l.latency.p50} ms, p99 ${l.latency.p99} ms, non-2xx ${l.non2xx})${held}`,
    );
    const storage = byName.get("POST /probe/loans");
    if (storage && storage.result.requests.total > 0) {
      const cpu = (m: Measured) => m.cpuMs / Math.max(1, m.result.requests.total);
      console.log(
        `against a loan's platform work alone (POST /probe/loans: the same D1 round trips, statements and Durable Object calls, nothing else): ` +
          `${(perSecond(loans.measured.result) / perSecond(storage.result)).toFixed(2)} of its rate; ` +
          `the stack's CPU ${cpu(loans.measured).toFixed(2)} ms per loan, ${cpu(storage).toFixed(2)} ms per probe`,
      );
    }
    const { verified } = loans;
    // Requests cut off at the deadline (or given up on after autocannon's timeout) still create their loans.
    const cutOff = verified.loans - l["2xx"] - loans.measured.sampled;
    const ok =
      verified.active === verified.loans &&
      verified.funded === verified.loans &&
      cutOff >= 0 &&
      cutOff <= connections + l.errors + l.timeouts &&
      verified.unrelayed === 0;
    console.log(
      `verified in D1: ${verified.loans} loans (${l["2xx"]} answered 2xx in time, ${loans.measured.sampled} sampled for round trips, ${cutOff} cut off at the deadline or timed out), ` +
        `${verified.active} ACTIVE, ${verified.funded} confirmed FUNDING settlements, ${verified.unrelayed} events left in the outbox` +
        (ok
          ? ": every loan created ended ACTIVE, funded once, its events relayed"
          : `; MISMATCH: ${JSON.stringify({ byState: verified.byState, unrelayed: verified.unrelayed })}`),
    );
    if (!ok) process.exitCode = 1;
    const m = loans.memory;
    console.log(
      `memory during the loan bench: the stack (workerd, pid ${m.pids.join(", ") || "not found"}) at most ${m.stackMaxRssMiB.toFixed(0)} MiB RSS ` +
        `(peak since start, VmHWM: ${m.stackPeakMiB.toFixed(0)} MiB); the bench process at most ${m.benchMaxRssMiB.toFixed(0)} MiB (VmHWM ${m.benchPeakMiB.toFixed(0)} MiB)`,
    );
  }
  if (deliveries) {
    const d = deliveries;
    console.log(`webhook deliveries, idle (one loan at a time, each awaited): commit → arrival p50 ${d.idle.p50} ms, max ${d.idle.max} ms`);
    console.log(
      `webhook deliveries, loaded: ${d.loaded.events} events of ${d.loaded.loans} loans (created in ${d.loaded.createSeconds.toFixed(1)} s) to a local receiver: ` +
        `${d.perSecond.toFixed(0)} events/s from outbox to receiver; commit → arrival p50 ${d.loaded.p50} ms, p99 ${d.loaded.p99} ms, max ${d.loaded.max} ms; ` +
        `last arrival ${d.drainSeconds.toFixed(1)} s after the last loan`,
    );
    const c = d.capacity;
    if (c) {
      console.log(
        `webhook deliveries, capacity (${c.deliveries} deliveries written at once, their messages sent in batches of 100): ` +
          `${c.perSecond.toFixed(0)} events/s to the receiver; send → arrival p50 ${c.p50} ms, p99 ${c.p99} ms, max ${c.max} ms; ` +
          `${c.arrived} arrived, ${c.duplicates} more than once, ${c.badSignatures} with a bad signature; the stack's CPU ${c.cpuPerEvent.toFixed(2)} ms per event`,
      );
    }
    const capacityOk = !c || (c.arrived === c.deliveries && c.duplicates === 0 && c.badSignatures === 0);
    if (!capacityOk) process.exitCode = 1;
    const b = d.burst;
    if (b) {
      const burstOk = b.arrived === b.committed && b.duplicates === 0 && b.badSignatures === 0;
      console.log(
        `webhook deliveries, burst (${b.committed} events committed at once, then relayed after one write, by a tenant of their own): ` +
          `${b.perSecond.toFixed(0)} events/s from the commit to the last arrival; commit → arrival p50 ${b.p50} ms, p99 ${b.p99} ms, max ${b.max} ms; ` +
          `${b.arrived} arrived, ${b.duplicates} more than once, ${b.badSignatures} with a bad signature` +
          (b.cpuPerEvent === undefined ? "" : `; the stack's CPU ${b.cpuPerEvent.toFixed(2)} ms per event`) +
          (burstOk ? "" : "; MISMATCH"),
      );
      if (!burstOk) process.exitCode = 1;
    }
    const u = d.underLoad;
    if (u?.burst) {
      const b = u.burst;
      const burstOk = b.arrived === b.committed && b.duplicates === 0 && b.badSignatures === 0;
      console.log(
        `webhook deliveries, burst under load (${b.committed} events committed at once by a tenant of their own while another created ${u.loans} loans one at a time): ` +
          `${b.perSecond.toFixed(0)} events/s from the commit to the last arrival; commit → arrival p50 ${b.p50} ms, p99 ${b.p99} ms, max ${b.max} ms; ` +
          `${b.arrived} arrived, ${b.duplicates} more than once, ${b.badSignatures} with a bad signature` +
          (burstOk ? "" : "; MISMATCH") +
          `; the loans' own ${u.events} events meanwhile: commit → arrival p50 ${u.p50} ms, p99 ${u.p99} ms, max ${u.max} ms`,
      );
      if (!burstOk) process.exitCode = 1;
    }
    for (const r of d.atRates) {
      const b = r.burst;
      const burstOk = b.arrived === b.committed && b.duplicates === 0 && b.badSignatures === 0;
      console.log(
        `webhook deliveries, burst beside ${r.rate} loans/s (${b.committed} events committed at once by a tenant of their own while another started a loan every ${(1000 / r.rate).toFixed(0)} ms: ` +
          `${r.loans} loans, ${r.achieved.toFixed(1)}/s${r.skipped > 0 ? `, ${r.skipped} starts skipped with ${STEADY_IN_FLIGHT} in flight` : ""}): ` +
          `${b.perSecond.toFixed(0)} events/s from the commit to the last arrival; commit → arrival p50 ${b.p50} ms, p99 ${b.p99} ms, max ${b.max} ms; ` +
          `${b.arrived} arrived, ${b.duplicates} more than once, ${b.badSignatures} with a bad signature` +
          (burstOk ? "" : "; MISMATCH") +
          `; the loans' own ${r.events} events meanwhile: commit → arrival p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms` +
          (b.busy === undefined
            ? ""
            : `; the stack busy ${(100 * b.busy).toFixed(0)}% of its one thread (${(100 * r.loansBusy).toFixed(0)}% with the loans alone)`),
      );
      if (!burstOk) process.exitCode = 1;
    }
    const ok = d.events === d.committed && d.duplicates === 0 && d.badSignatures === 0;
    console.log(
      `verified: ${d.committed} events committed, ${d.events} arrived, ${d.duplicates} more than once, ${d.badSignatures} with a bad signature` +
        (ok ? ": every event delivered once, signed" : "; MISMATCH"),
    );
    if (!ok) process.exitCode = 1;
  }
} finally {
  await stack.dispose();
}

/**
 * One autocannon run against `path` (nothing counted: counting has a cost
 * of its own), then, with `countTrips`, TRIP_SAMPLES requests one after
 * another that ask for their round trips (`x-round-trips: 1` on the
 * request), summed over their 2xx answers.
 */
async function load(
  stack: Stack,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: () => string; countTrips?: boolean; amount?: number },
) {
  const trips: Trips = { answers: 0, d1: 0, doCalls: 0, objectD1: 0, objectDoCalls: 0 };
  const { body } = options;
  const headers = { "accept-encoding": acceptEncoding, ...options.headers, ...(body ? { "content-type": "application/json" } : {}) };
  const result = await autocannonWithRequests({
    url: stack.baseUrl,
    connections,
    ...(options.amount ? { amount: options.amount } : { duration: seconds }),
    requests: [
      {
        method: options.method ?? "GET",
        path,
        headers,
        ...(body
          ? {
              setupRequest: (req: BenchRequest) => {
                req.body = body();
                return req;
              },
            }
          : {}),
      },
    ],
  });
  let sampled = 0;
  // Miniflare has answered ECONNRESET right after autocannon dropped its sockets: let it settle first.
  if (options.countTrips) await new Promise((r) => setTimeout(r, 1000));
  for (let n = 0; options.countTrips && n < TRIP_SAMPLES; n++) {
    const res = await fetch(`${stack.baseUrl}${path}`, {
      method: options.method ?? "GET",
      headers: { ...headers, [ROUND_TRIPS_HEADER]: "1" },
      body: body?.(),
    }).catch(() => null);
    if (!res) continue; // not sent, or lost on the way: not a sample (the loan check allows for it)
    sampled++;
    await res.arrayBuffer();
    const raw = res.headers.get(ROUND_TRIPS_HEADER);
    if (!res.ok || !raw) continue;
    const c = JSON.parse(raw) as RoundTripCounter;
    trips.answers++;
    trips.d1 += c.d1;
    trips.doCalls += c.doCalls;
    trips.objectD1 += c.inObjects.d1;
    trips.objectDoCalls += c.inObjects.doCalls;
  }
  return { result, trips, sampled };
}

/**
 * `POST /v1/loans` with a unique `idempotencyKey` per request: each one is a
 * new loan, underwritten and funded on the simulated chain before it answers.
 * The sandbox pool is raised first so that liquidity never runs out; then
 * every loan the bench created is counted in D1 by status. The stack's and
 * the bench's resident memory are sampled throughout.
 */
async function benchLoanCreation(
  stack: Stack,
  apiKey: string,
  run: (name: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: () => string; probe?: string }) => Promise<Measured>,
) {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string }; merchantConfigs: { loanProductId: string }[] };
  const loanProductId = me.merchantConfigs[0]!.loanProductId;
  const pool = await fetch(`${stack.baseUrl}/v1/sandbox/liquidity`, { method: "PUT", headers, body: JSON.stringify({ available: "100000000.00" }) });
  // Without the route the signup pool (100,000.00) holds 10,000 loans of 10.00; the count below shows if it ran dry.
  if (pool.status !== 200) console.log(`note: PUT /v1/sandbox/liquidity answered ${pool.status}; the pool stays at its signup default`);

  const history = await loadLoanHistory(stack, { apiKey, tenantId: me.tenant.id, loanProductId, loans: Number(process.env.BENCH_LOAN_HISTORY ?? 0) });

  const runId = `${Date.now().toString(36)}`;
  let i = 0;
  const memory = sampleMemory();
  const measured = await run("POST /v1/loans (fund)", "/v1/loans", {
    method: "POST",
    headers: { "x-api-key": apiKey },
    probe: "POST /probe/write",
    body: () => {
      const n = i++;
      return JSON.stringify({
        loanProductId,
        borrowerRef: `bench-borrower-${n % 1000}`,
        borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        chain: "POLYGON_AMOY",
        principalAmount: "10.00",
        idempotencyKey: `bench-${runId}-${n}`,
      });
    },
  });
  const memoryUse = memory.stop();
  const counted = await countBenchLoans(stack, me.tenant.id);
  // The history's loans are ACTIVE and funded too (copies of a funded loan, with their settlements): not the run's.
  const verified = { ...counted, loans: counted.loans - history, active: counted.active - history, funded: counted.funded - history };
  return { measured, history, memory: { pids: memory.pids, ...memoryUse }, verified };
}

/**
 * BENCH_LOAN_HISTORY=N: the bench tenant holds N ACTIVE loans (each with its
 * own borrower, events and funding settlement) before its loans are timed,
 * as a merchant with a history does: one loan through the API, then copied
 * in bulk (bench/scale-data.ts). Loan creation reads the borrower's own
 * loans, never the tenant's, so its rate should not move with N.
 */
async function loadLoanHistory(stack: Stack, o: { apiKey: string; tenantId: string; loanProductId: string; loans: number }): Promise<number> {
  if (o.loans <= 0) return 0;
  const started = performance.now();
  const template = await fetch(`${stack.baseUrl}/v1/loans`, {
    method: "POST",
    headers: { "x-api-key": o.apiKey, "content-type": "application/json" },
    body: JSON.stringify({
      loanProductId: o.loanProductId,
      borrowerRef: "bench-history-template",
      borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
      chain: "POLYGON_AMOY",
      principalAmount: "10.00",
      idempotencyKey: `bench-history-${Date.now().toString(36)}`,
    }),
  });
  if (template.status !== 201) throw new Error(`the history's template loan answered ${template.status}: ${await template.text()}`);
  const templateLoanId = ((await template.json()) as { id: string }).id;
  const db = retryingD1((await stack.mf.getD1Database("DB", stack.names.api)) as unknown as D1Database);
  await copyLoans(db, { index: 0, tenantId: o.tenantId, templateLoanId, apiKey: o.apiKey }, 0, [1, o.loans - 1], { due: false, now: Date.now() });
  console.log(
    `history: the bench tenant holds ${o.loans.toLocaleString("en-US")} ACTIVE loans (made in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  return o.loans;
}

type LoanCount = { loans: number; active: number; funded: number; unrelayed: number; byState: { status: string; fundingState: string; count: number }[] };

/**
 * The bench tenant's loans by status and funding state, and its confirmed
 * funding transfers, read from D1 once they stop moving: autocannon stops
 * counting at the deadline while up to `connections` requests are still at
 * work in the worker, and those still create (and fund) their loans.
 */
async function countBenchLoans(stack: Stack, tenantId: string): Promise<LoanCount> {
  const read = async (): Promise<LoanCount> => {
    const db = await stack.mf.getD1Database("DB", stack.names.api);
    const byState = (
      await db
        .prepare(
          "SELECT status, funding_state AS fundingState, COUNT(*) AS count FROM loans WHERE tenant_id = ? GROUP BY status, funding_state ORDER BY status, funding_state",
        )
        .bind(tenantId)
        .all<{ status: string; fundingState: string; count: number }>()
    ).results;
    const funded = await db
      .prepare("SELECT COUNT(*) AS count FROM settlements WHERE tenant_id = ? AND kind = 'FUNDING' AND status = 'CONFIRMED'")
      .bind(tenantId)
      .first<{ count: number }>();
    // Events the outbox relay has not moved to the deliveries Queue (after the cron safety net ran below).
    const unrelayed = await db
      .prepare("SELECT COUNT(*) AS count FROM events WHERE tenant_id = ? AND relayed_at IS NULL")
      .bind(tenantId)
      .first<{ count: number }>();
    const sum = (rows: typeof byState) => rows.reduce((total, r) => total + r.count, 0);
    return {
      loans: sum(byState),
      active: sum(byState.filter((r) => r.status === "ACTIVE")),
      funded: funded?.count ?? 0,
      unrelayed: unrelayed?.count ?? 0,
      byState,
    };
  };
  // Miniflare's D1 proxy has answered ECONNRESET right after autocannon dropped its sockets: retry, and wait for two equal reads.
  let previous = "";
  // The api relays each write's events at once; the cron relay is the safety net for the rest.
  await new Promise((r) => setTimeout(r, 500));
  await stack.scheduled().catch(() => undefined);
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((r) => setTimeout(r, 250));
    const count = await read().catch(() => null);
    if (!count) continue;
    const key = JSON.stringify(count);
    if (key === previous) return count;
    previous = key;
  }
  return read();
}

/**
 * Webhook delivery, end to end through the real Queue: one endpoint on a
 * receiver in this process, arrivals timed against each envelope's
 * `createdAt` (the commit time on the tenant's clock, which for a new sandbox
 * tenant is the real clock). First a few loans one by one, each waited for
 * (the delay of an idle pipeline), then loans one after another for at most
 * BENCH_SECONDS (a single writer, so the numbers measure outbox → Queue →
 * consumer → receiver rather than the api). Ends once every committed event
 * of the tenant has arrived and its owner e-mails are sent, so the benchmarks
 * after it start on an idle queue. Undefined (and a note) if the routes are
 * missing.
 */
async function benchDeliveries(stack: Stack, stackCpu: () => number) {
  const maxLoans = Number(process.env.BENCH_DELIVERY_LOANS ?? 200);
  const burstEvents = Number(process.env.BENCH_BURST_EVENTS ?? 600);
  const loadRates = (process.env.BENCH_LOAD_RATES ?? "10,25,50").split(",").filter(Boolean).map(Number);
  const IDLE_LOANS = 5;
  const apiKey = await createApiKey(stack.baseUrl);
  if (!apiKey) return undefined;
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string }; merchantConfigs: { loanProductId: string }[] };

  const { arrivals, state, server: receiver } = signedReceiver((envelope) => Date.parse(envelope.createdAt));
  const db = await stack.mf.getD1Database("DB", stack.names.api);
  const count = async (sql: string) => (await db.prepare(sql).bind(me.tenant.id).first<{ n: number }>())?.n ?? 0;
  /** Until every committed event of the tenant has arrived and its e-mails are out (or 120 s). */
  const drain = async () => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const committed = await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?");
      const pendingMail = await count("SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ? AND email_status = 'PENDING'");
      if (arrivals.size >= committed && pendingMail === 0) return committed;
      if (Date.now() > deadline) {
        console.log(`webhook deliveries: gave up waiting after 120 s (${arrivals.size} of ${committed} events arrived, ${pendingMail} e-mails pending)`);
        return committed;
      }
      await Bun.sleep(20);
    }
  };
  let loans = 0;
  /** Loans started (their refs and keys): loans of a steady load are started before earlier ones answer. */
  let started = 0;
  const createLoan = async () => {
    const n = started++;
    const post = () =>
      fetch(`${stack.baseUrl}/v1/loans`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          loanProductId: me.merchantConfigs[0]!.loanProductId,
          borrowerRef: `delivery-bench-${n}`,
          borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
          chain: "POLYGON_AMOY",
          principalAmount: "10.00",
          idempotencyKey: `delivery-bench-${me.tenant.id}-${n}`,
        }),
      });
    // A keep-alive connection the server closed as this request went out (seen twice at the first loan): sent
    // again with the same idempotency key, which is safe (README "Idempotency"; answered 200 if the first one created it).
    const res = await post().catch((error: { code?: string }) => {
      if (error?.code !== "ECONNRESET") throw error;
      return post();
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`POST /v1/loans answered ${res.status} ${await res.text()}`);
    loans++;
  };
  const delaysOf = (timed: { createdAt: number; arrivedAt: number }[]) => {
    const delays = timed.map((a) => a.arrivedAt - a.createdAt).sort((a, b) => a - b);
    const at = (q: number) => delays[Math.min(delays.length - 1, Math.ceil(q * delays.length) - 1)] ?? NaN;
    return { p50: at(0.5), p99: at(0.99), max: delays.at(-1) ?? NaN };
  };

  try {
    const registered = await fetch(`${stack.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hooks`, events: ["*"] }),
    });
    if (registered.status !== 201) {
      console.log(`skipping webhook deliveries: POST /v1/webhooks answered ${registered.status} ${await registered.text()}`);
      return undefined;
    }
    state.secret = ((await registered.json()) as { secret: string }).secret;

    console.log(`webhook deliveries: ${IDLE_LOANS} loans one by one, then up to ${maxLoans} loans in at most ${seconds} s, one at a time…`);
    for (let i = 0; i < IDLE_LOANS; i++) {
      await createLoan();
      await drain();
    }
    const idle = delaysOf([...arrivals.values()]);
    const idleIds = new Set(arrivals.keys());

    const loadedFrom = Date.now();
    while (loans - IDLE_LOANS < maxLoans && Date.now() - loadedFrom < seconds * 1000) await createLoan();
    const created = Date.now();
    const loadedLoans = loans - IDLE_LOANS;
    let committed = await drain();

    const timed = [...arrivals].filter(([id]) => !idleIds.has(id)).map(([, a]) => a);
    const firstCommit = Math.min(...timed.map((a) => a.createdAt));
    const lastArrival = Math.max(...timed.map((a) => a.arrivedAt));
    const capacity = await deliveryCapacity(stack, { apiKey, tenantId: me.tenant.id, delaysOf, stackCpu });
    const burstKey = await createApiKey(stack.baseUrl);
    const burst = burstKey ? await deliveryBurst(stack, { apiKey: burstKey, events: burstEvents, delaysOf, cpuMillis: stackCpu }) : undefined;

    // The burst again, by another tenant, while this one creates loans one after another (as loaded above):
    // both timed, the burst's events and the loans' own.
    const loadedBurstKey = await createApiKey(stack.baseUrl);
    let underLoad: { burst: Awaited<ReturnType<typeof deliveryBurst>>; loans: number; events: number; p50: number; p99: number; max: number } | undefined;
    if (loadedBurstKey) {
      let stop = false;
      const loansBefore = loans;
      const loadStarted = Date.now();
      const loading = (async () => {
        while (!stop) await createLoan();
      })();
      try {
        await Bun.sleep(1_000);
        const b = await deliveryBurst(stack, { apiKey: loadedBurstKey, events: burstEvents, delaysOf });
        stop = true;
        await loading;
        committed = await drain();
        const meanwhile = [...arrivals.values()].filter((a) => a.createdAt >= loadStarted);
        underLoad = { burst: b, loans: loans - loansBefore, events: meanwhile.length, ...delaysOf(meanwhile) };
      } finally {
        stop = true;
        await loading;
      }
    }
    // The burst again at steady loan rates (an open loop: a loan started every 1/rate s, whatever the answers),
    // so the curve says what the pipeline carries beside a given load rather than beside one that takes all it can.
    const atRates: SteadyLoad[] = [];
    for (const rate of loadRates) {
      const key = await createApiKey(stack.baseUrl);
      if (!key) break;
      const loansBefore = loans;
      const loadStarted = Date.now();
      const steady = steadyLoans(rate, createLoan);
      let b: Awaited<ReturnType<typeof deliveryBurst>>;
      let loansBusy = 0;
      try {
        // The loans alone first: what they take of the stack's one thread (and the load's pace settles).
        await Bun.sleep(500);
        const [cpu0, at0] = [stackCpu(), performance.now()];
        await Bun.sleep(1_500);
        loansBusy = (stackCpu() - cpu0) / (performance.now() - at0);
        b = await deliveryBurst(stack, { apiKey: key, events: burstEvents, delaysOf, cpuMillis: stackCpu });
      } finally {
        await steady.stop();
      }
      const loadSeconds = (Date.now() - loadStarted) / 1000;
      committed = await drain();
      const meanwhile = [...arrivals.values()].filter((a) => a.createdAt >= loadStarted);
      if (b)
        atRates.push({
          rate,
          burst: b,
          loans: loans - loansBefore,
          achieved: (loans - loansBefore) / loadSeconds,
          skipped: steady.skipped(),
          loansBusy,
          events: meanwhile.length,
          ...delaysOf(meanwhile),
        });
    }
    return {
      capacity,
      burst,
      underLoad,
      atRates,
      loans,
      committed,
      events: arrivals.size,
      duplicates: state.requests - arrivals.size,
      badSignatures: state.badSignatures,
      idle,
      loaded: { events: timed.length, loans: loadedLoans, createSeconds: (created - loadedFrom) / 1000, ...delaysOf(timed) },
      perSecond: timed.length / ((lastArrival - firstCommit) / 1000),
      drainSeconds: (lastArrival - created) / 1000,
    };
  } finally {
    receiver.stop(true);
  }
}

/** The burst beside a steady load: the loan rate asked, what the load did, the burst, and the loans' own events meanwhile. */
type SteadyLoad = {
  rate: number;
  burst: NonNullable<Awaited<ReturnType<typeof deliveryBurst>>>;
  loans: number;
  achieved: number;
  skipped: number;
  /** The stack's CPU while the loans ran alone, as a share of its one thread. */
  loansBusy: number;
  events: number;
  p50: number;
  p99: number;
  max: number;
};

/**
 * What the delivery pipeline (Queue consumer, D1 bookkeeping, signing, HTTP)
 * can carry when events come faster than this machine can make loans: a
 * second endpoint is registered, one delivery of each of the tenant's
 * committed events to it is written straight into D1 (as the relay writes
 * them: PENDING, attempt 0), and their Queue messages are sent at once, in
 * batches of 100 (the Queue's limit). Prints events/s from the first send to
 * the last arrival, and send → arrival p50/p99. Every delivery must arrive
 * once, signed.
 */
async function deliveryCapacity(
  stack: Stack,
  input: {
    apiKey: string;
    tenantId: string;
    delaysOf: (t: { createdAt: number; arrivedAt: number }[]) => { p50: number; p99: number; max: number };
    stackCpu: () => number;
  },
) {
  const sent = new Map<string, number>();
  const { arrivals: arrived, state, server: receiver } = signedReceiver((envelope, arrivedAt) => sent.get(envelope.id) ?? arrivedAt);
  try {
    const registered = await fetch(`${stack.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": input.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/capacity`, events: ["*"] }),
    });
    if (registered.status !== 201) return undefined;
    const endpoint = (await registered.json()) as { id: string; secret: string };
    state.secret = endpoint.secret;
    const db = await stack.mf.getD1Database("DB", stack.names.api);
    const now = Date.now();
    await db
      .prepare(
        `INSERT INTO webhook_deliveries (id, tenant_id, event_id, event_type, endpoint_id, redelivery_of, mode, status, attempt_count, next_attempt_at, created_at, updated_at)
         SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
                tenant_id, id, type, ?, NULL, 'sandbox', 'PENDING', 0, ?, ?, ?
         FROM events WHERE tenant_id = ?`,
      )
      .bind(endpoint.id, now, now, now, input.tenantId)
      .run();
    const rows = (
      await db.prepare("SELECT id, event_id AS eventId FROM webhook_deliveries WHERE endpoint_id = ?").bind(endpoint.id).all<{ id: string; eventId: string }>()
    ).results;
    const queue = await stack.mf.getQueueProducer<DeliveryMessage>("WEBHOOK_DELIVERIES", stack.names.api);
    const cpuBefore = input.stackCpu();
    const started = Date.now();
    for (let i = 0; i < rows.length; i += 100) {
      const batch = rows.slice(i, i + 100);
      const at = Date.now();
      for (const r of batch) sent.set(r.eventId, at);
      await queue.sendBatch(batch.map((r) => ({ body: { kind: "delivery" as const, deliveryId: r.id, attempt: 1 } })));
    }
    const deadline = Date.now() + 120_000;
    while (arrived.size < rows.length && Date.now() < deadline) await Bun.sleep(10);
    const last = Math.max(...[...arrived.values()].map((a) => a.arrivedAt));
    const cpuMs = input.stackCpu() - cpuBefore;
    return {
      deliveries: rows.length,
      /** The stack's CPU from the first send until the last arrival, per delivery that arrived. */
      cpuPerEvent: cpuMs / Math.max(1, arrived.size),
      arrived: arrived.size,
      duplicates: state.requests - arrived.size,
      badSignatures: state.badSignatures,
      perSecond: arrived.size / ((last - started) / 1000),
      ...input.delaysOf([...arrived.values()]),
    };
  } finally {
    receiver.stop(true);
  }
}

/** Signup → dashboard token → API key, per DECISIONS.md. Undefined (and a note) if the routes are missing. */
async function createApiKey(baseUrl: string): Promise<string | undefined> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const signup = await post("/v1/auth/signup", {
    email: `bench-${crypto.randomUUID()}@example.com`,
    password: "bench-password-long-enough",
    companyName: "Bench Co",
  });
  if (signup.status !== 201) {
    console.log(`skipping /v1/me: signup answered ${signup.status} ${await signup.text()}`);
    return undefined;
  }
  const { accessToken } = (await signup.json()) as { accessToken: string };
  const created = await post("/v1/api-keys", { name: "bench" }, { authorization: `Bearer ${accessToken}` });
  if (created.status !== 201) {
    console.log(`skipping /v1/me: POST /v1/api-keys answered ${created.status} ${await created.text()}`);
    return undefined;
  }
  return ((await created.json()) as { key: string }).key;
}
