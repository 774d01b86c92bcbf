import autocannon, { type Result } from "autocannon";
import { startStack } from "../workers/local/stack.ts";

/**
 * `npm run bench`: the bundled workers in Miniflare (in memory), load from
 * autocannon over 127.0.0.1. Not a test: it prints numbers to compare runs.
 * The rate limits are raised far above what the bench can send, so it measures
 * the handlers (auth, D1 lookups), not 429s.
 *
 * Env: BENCH_SECONDS (10 per endpoint), BENCH_CONNECTIONS (10).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

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

  console.log();
  console.log(["endpoint".padEnd(24), "req/s".padStart(9), "p50 ms".padStart(8), "p99 ms".padStart(8), "2xx".padStart(9), "non-2xx".padStart(8), "errors".padStart(7)].join(" "));
  for (const { name, result: r } of results) {
    console.log([name.padEnd(24), r.requests.average.toFixed(0).padStart(9), String(r.latency.p50).padStart(8), String(r.latency.p99).padStart(8), String(r["2xx"]).padStart(9), String(r.non2xx).padStart(8), String(r.errors).padStart(7)].join(" "));
  }
  const [health, me] = results.map((r) => r.result);
  if (health && me) console.log(`\nme/health (req/s): ${(me.requests.average / health.requests.average).toFixed(2)}`);
} finally {
  await stack.dispose();
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
