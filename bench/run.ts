import autocannon, { type Options, type Result } from "autocannon";
import { startStack, type Stack } from "../workers/local/stack.ts";

/**
 * `npm run bench`: the bundled workers in Miniflare (in memory), load from
 * autocannon over 127.0.0.1. Not a test: it prints numbers to compare runs.
 * The rate limits are raised far above what the bench can send, so it measures
 * the handlers (auth, D1 lookups), not 429s.
 *
 * The loan benchmark posts `POST /v1/loans` with a fresh `idempotencyKey` per
 * request, so every request creates, underwrites (default policy: APPROVED)
 * and funds a loan on the simulated chain, then checks in D1 that every loan
 * it created ended ACTIVE. Its loans/s is printed against `GET /v1/health`
 * measured in the same run.
 *
 * Env: BENCH_SECONDS (10 per endpoint), BENCH_CONNECTIONS (10).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

/** autocannon's `requests` with `setupRequest` (in the package, not yet in bench/autocannon.d.ts). */
type BenchRequest = { method: string; path: string; headers: Record<string, string>; body?: string };
const autocannonWithRequests = autocannon as unknown as (
  options: Options & { requests: (Partial<BenchRequest> & { setupRequest?: (req: BenchRequest) => BenchRequest })[] },
) => Promise<Result>;

const stack = await startStack({ ratelimits: { API_KEY_LIMITER: UNLIMITED, IP_LIMITER: UNLIMITED }, logLevel: "error" });
try {
  const results: { name: string; result: Result }[] = [];
  const run = async (name: string, path: string, headers: Record<string, string> = {}) => {
    console.log(`${name}: ${seconds} s, ${connections} connections…`);
    results.push({ name, result: await autocannon({ url: `${stack.baseUrl}${path}`, connections, duration: seconds, headers }) });
  };

  await run("GET /v1/health", "/v1/health");
  const apiKey = await createApiKey(stack.baseUrl);
  if (apiKey) await run("GET /v1/me (x-api-key)", "/v1/me", { "x-api-key": apiKey });
  const loans = apiKey ? await benchLoanCreation(stack, apiKey) : undefined;
  if (loans) results.push({ name: "POST /v1/loans (fund)", result: loans.result });

  console.log();
  console.log(["endpoint".padEnd(24), "req/s".padStart(9), "p50 ms".padStart(8), "p99 ms".padStart(8), "2xx".padStart(9), "non-2xx".padStart(8), "errors".padStart(7)].join(" "));
  for (const { name, result: r } of results) {
    console.log([name.padEnd(24), r.requests.average.toFixed(0).padStart(9), String(r.latency.p50).padStart(8), String(r.latency.p99).padStart(8), String(r["2xx"]).padStart(9), String(r.non2xx).padStart(8), String(r.errors).padStart(7)].join(" "));
  }
  const [health, me] = results.map((r) => r.result);
  if (health && me) console.log(`\nme/health (req/s): ${(me.requests.average / health.requests.average).toFixed(2)}`);
  if (health && loans) {
    const perSecond = loans.result["2xx"] / (loans.result.duration || seconds);
    console.log(`loans/health (req/s): ${(loans.result.requests.average / health.requests.average).toFixed(3)}`);
    console.log(`loans created and funded: ${perSecond.toFixed(0)} loans/s (p50 ${loans.result.latency.p50} ms, p99 ${loans.result.latency.p99} ms, non-2xx ${loans.result.non2xx})`);
    const { verified } = loans;
    // Requests cut off at the deadline still create their loans: at most one per connection beyond the 2xx answers.
    const cutOff = verified.loans - loans.result["2xx"];
    const ok = verified.active === verified.loans && verified.funded === verified.loans && cutOff >= 0 && cutOff <= connections;
    console.log(
      `verified in D1: ${verified.loans} loans (${loans.result["2xx"]} answered 2xx in time, ${cutOff} cut off at the deadline), ` +
        `${verified.active} ACTIVE, ${verified.funded} confirmed FUNDING settlements` +
        (ok ? ": every loan created ended ACTIVE, funded once" : `; MISMATCH: ${JSON.stringify(verified.byState)}`),
    );
    if (!ok) process.exitCode = 1;
  }
} finally {
  await stack.dispose();
}

/**
 * `POST /v1/loans` with a unique `idempotencyKey` per request: each one is a
 * new loan, underwritten and funded on the simulated chain before it answers.
 * The sandbox pool is raised first so that liquidity never runs out; then
 * every loan the bench created is counted in D1 by status.
 */
async function benchLoanCreation(stack: Stack, apiKey: string) {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { tenant: { id: string }; merchantConfigs: { loanProductId: string }[] };
  const loanProductId = me.merchantConfigs[0]!.loanProductId;
  const pool = await fetch(`${stack.baseUrl}/v1/sandbox/liquidity`, { method: "PUT", headers, body: JSON.stringify({ available: "100000000.00" }) });
  // Without the route the signup pool (100,000.00) holds 10,000 loans of 10.00; the count below shows if it ran dry.
  if (pool.status !== 200) console.log(`note: PUT /v1/sandbox/liquidity answered ${pool.status}; the pool stays at its signup default`);

  const run = `${Date.now().toString(36)}`;
  let i = 0;
  console.log(`POST /v1/loans (create, approve, fund): ${seconds} s, ${connections} connections…`);
  const result = await autocannonWithRequests({
    url: stack.baseUrl,
    connections,
    duration: seconds,
    requests: [
      {
        method: "POST",
        path: "/v1/loans",
        headers,
        setupRequest: (req) => {
          const n = i++;
          req.body = JSON.stringify({
            loanProductId,
            borrowerRef: `bench-borrower-${n % 1000}`,
            borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
            chain: "POLYGON_AMOY",
            principalAmount: "10.00",
            idempotencyKey: `bench-${run}-${n}`,
          });
          return req;
        },
      },
    ],
  });

  return { result, verified: await countBenchLoans(stack, me.tenant.id) };
}

type LoanCount = { loans: number; active: number; funded: number; byState: { status: string; fundingState: string; count: number }[] };

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
        .prepare("SELECT status, funding_state AS fundingState, COUNT(*) AS count FROM loans WHERE tenant_id = ? GROUP BY status, funding_state ORDER BY status, funding_state")
        .bind(tenantId)
        .all<{ status: string; fundingState: string; count: number }>()
    ).results;
    const funded = await db
      .prepare("SELECT COUNT(*) AS count FROM settlements WHERE tenant_id = ? AND kind = 'FUNDING' AND status = 'CONFIRMED'")
      .bind(tenantId)
      .first<{ count: number }>();
    const sum = (rows: typeof byState) => rows.reduce((total, r) => total + r.count, 0);
    return { loans: sum(byState), active: sum(byState.filter((r) => r.status === "ACTIVE")), funded: funded?.count ?? 0, byState };
  };
  // Miniflare's D1 proxy has answered ECONNRESET right after autocannon dropped its sockets: retry, and wait for two equal reads.
  let previous = "";
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
