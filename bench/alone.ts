import { startStack } from "../workers/local/stack.ts";
import { childWorkerdPids, cpuMillis } from "./memory.ts";
import { probeWorker } from "./probes.ts";

/**
 * `bun bench/alone.ts`: what a request costs alone against among others.
 * Each path is loaded by 1 client, then by 10, alternated twice, for
 * BENCH_SECONDS (3) each; prints req/s and the stack's CPU per request
 * (/proc). workerd runs every isolate on one thread, and a request that
 * comes alone costs about twice the CPU of one among ten (README
 * "Benchmarks": one thread, and what a request alone costs).
 *
 * Env: BENCH_SECONDS (3), BENCH_PATHS (`health,read,write,loans`).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const wanted = (process.env.BENCH_PATHS ?? "health,read,write,loans").split(",");
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

const stack = await startStack({
  ratelimits: Object.fromEntries(["API_KEY_LIMITER", "IP_LIMITER", "TENANT_LIMITER", "SIGNUP_LIMITER"].map((n) => [n, UNLIMITED])),
  logLevel: "error",
  extraWorkers: [probeWorker()],
});
const workerd = childWorkerdPids();
try {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const signup = (await (
    await post("/v1/auth/signup", { email: `alone-${crypto.randomUUID()}@example.com`, password: "bench-password-long-enough", companyName: "Alone" })
  ).json()) as { accessToken: string; tenant: { id: string } };
  const key = ((await (await post("/v1/api-keys", { name: "alone" }, { authorization: `Bearer ${signup.accessToken}` })).json()) as { key: string }).key;
  const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers: { "x-api-key": key } })).json()) as { merchantConfigs: { loanProductId: string }[] };
  await fetch(`${stack.baseUrl}/v1/sandbox/liquidity`, {
    method: "PUT",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ available: "100000000.00" }),
  });
  let n = 0;
  const paths: Record<string, () => Promise<Response>> = {
    health: () => fetch(`${stack.baseUrl}/v1/health`),
    read: () => fetch(`${stack.baseUrl}/probe/read?id=${signup.tenant.id}`),
    write: () => post("/probe/write", {}),
    loans: () =>
      post(
        "/v1/loans",
        {
          loanProductId: me.merchantConfigs[0]!.loanProductId,
          borrowerRef: `alone-${n % 1000}`,
          borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
          chain: "POLYGON_AMOY",
          principalAmount: "10.00",
          idempotencyKey: `alone-${Date.now()}-${n++}`,
        },
        { "x-api-key": key },
      ),
  };
  console.log(`${"path".padEnd(8)} ${"clients".padStart(7)} ${"req/s".padStart(7)} ${"cpu ms".padStart(7)}`);
  for (const name of wanted) {
    const send = paths[name];
    if (!send) throw new Error(`unknown path ${name}: one of ${Object.keys(paths).join(", ")}`);
    for (const clients of [1, 10, 1, 10]) {
      let done = 0;
      let stop = false;
      const loops = Array.from({ length: clients }, async () => {
        while (!stop) {
          const res = await send();
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`${name} answered ${res.status}`);
          done++;
        }
      });
      await Bun.sleep(500);
      const [cpu0, at0, n0] = [cpuMillis(workerd), performance.now(), done];
      await Bun.sleep(seconds * 1000);
      const [cpu1, at1, n1] = [cpuMillis(workerd), performance.now(), done];
      stop = true;
      await Promise.all(loops);
      const count = Math.max(1, n1 - n0);
      console.log(
        `${name.padEnd(8)} ${String(clients).padStart(7)} ${((1000 * count) / (at1 - at0)).toFixed(0).padStart(7)} ${((cpu1 - cpu0) / count).toFixed(2).padStart(7)}`,
      );
    }
  }
} finally {
  await stack.dispose();
}
