import { readFileSync } from "node:fs";
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";
import autocannon, { type Result } from "autocannon";
import { type Stack, startStack } from "../workers/local/stack.ts";
import { deliveryBurst } from "./delivery-burst.ts";
import { steadyLoans } from "./steady-loans.ts";

/**
 * `bun bench/profile.ts [me|loans|burst]`: a CPU profile of one endpoint under load (or of a burst of webhook events),
 * taken from workerd through its DevTools inspector (Profiler domain), and
 * printed as the functions with the most self time, grouped by package.
 * Not a test and not the bench: it says where a path's CPU goes.
 *
 * Env: PROFILE_SECONDS (10), PROFILE_CONNECTIONS (10), PROFILE_WORKERS (api; comma-separated worker names to profile), PROFILE_TOP (40),
 * PROFILE_INCLUSIVE (off; a number N prints the bundle's N named functions with the most inclusive time),
 * PROFILE_BESIDE_LOANS (0; `burst` only: that many loans a second by another tenant during the burst),
 * PROFILE_HOOKS (off; 1 registers a webhook endpoint for every event, so `PROFILE_WORKERS=webhooks` has deliveries to profile),
 * PROFILE_SOURCES (off; 1 maps the bundle's self time through its source map to where it came from: a package of
 * node_modules, or a folder of this repository, e.g. `shared/loans`).
 */
const which = process.argv[2] ?? "me";
const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const UNLIMITED = { limit: 100_000_000, period: 60 as const };
const inspectorPort = 9329;

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number; children?: number[] };
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

const stack = await startStack({
  ratelimits: Object.fromEntries(["API_KEY_LIMITER", "IP_LIMITER", "TENANT_LIMITER", "SIGNUP_LIMITER"].map((n) => [n, UNLIMITED])),
  inspectorPort,
  logLevel: "error",
});
try {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  /** A new tenant's API key. */
  const newKey = async () => {
    const signup = (await (
      await post("/v1/auth/signup", { email: `p-${crypto.randomUUID()}@example.com`, password: "profile-password-long", companyName: "P" })
    ).json()) as { accessToken: string };
    return ((await (await post("/v1/api-keys", { name: "p" }, { authorization: `Bearer ${signup.accessToken}` })).json()) as { key: string }).key;
  };
  const key = await newKey();
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { merchantConfigs: { loanProductId: string }[] };
  await fetch(`${stack.baseUrl}/v1/sandbox/liquidity`, { method: "PUT", headers, body: JSON.stringify({ available: "100000000.00" }) });
  // PROFILE_HOOKS=1: every event also goes to a webhook endpoint here (answering 204), so the webhooks worker has work.
  const receiver = process.env.PROFILE_HOOKS ? Bun.serve({ port: 0, fetch: () => new Response(null, { status: 204 }) }) : undefined;
  if (receiver) {
    const hook = await fetch(`${stack.baseUrl}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hooks`, events: ["*"] }),
    });
    if (hook.status !== 201) throw new Error(`POST /v1/webhooks answered ${hook.status}`);
  }

  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
    title?: string;
    id?: string;
    webSocketDebuggerUrl: string;
  }[];
  const wanted = (process.env.PROFILE_WORKERS ?? "api").split(",");
  const chosen = targets.filter((t) => wanted.includes("all") || wanted.some((w) => t.webSocketDebuggerUrl.includes(w)));
  console.log(`profiling ${chosen.map((t) => t.webSocketDebuggerUrl).join(", ")}`);
  const sessions = await Promise.all(chosen.map((t) => inspector(t.webSocketDebuggerUrl)));
  for (const s of sessions) {
    await s.send("Profiler.enable");
    await s.send("Profiler.setSamplingInterval", { interval: 200 });
    await s.send("Profiler.start");
  }
  let i = 0;
  const result =
    which === "burst"
      ? await burst(stack, key, Number(process.env.PROFILE_EVENTS ?? 800), Number(process.env.PROFILE_BESIDE_LOANS ?? 0), newKey)
      : await (autocannon as unknown as (o: unknown) => Promise<Result>)({
          url: stack.baseUrl,
          connections: Number(process.env.PROFILE_CONNECTIONS ?? 10),
          duration: seconds,
          requests: [
            which === "loans"
              ? ({
                  method: "POST",
                  path: "/v1/loans",
                  headers,
                  setupRequest: (req: { body?: string }) => {
                    i++;
                    req.body = JSON.stringify({
                      loanProductId: me.merchantConfigs[0]!.loanProductId,
                      borrowerRef: `p-${i % 1000}`,
                      borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
                      chain: "POLYGON_AMOY",
                      principalAmount: "10.00",
                      idempotencyKey: `p-${Date.now()}-${i}`,
                    });
                    return req;
                  },
                } as never)
              : { method: "GET", path: "/v1/me", headers },
          ],
        });
  console.log(`${which}: ${result.requests.average.toFixed(0)} req/s, 2xx ${result["2xx"]}, non-2xx ${result.non2xx}`);
  for (const [n, s] of sessions.entries()) {
    const { profile } = (await s.send("Profiler.stop")) as { profile: Profile };
    report(chosen[n]!.webSocketDebuggerUrl, profile, result.requests.total);
    s.close();
  }
  receiver?.stop(true);
} finally {
  await stack.dispose();
}

/**
 * `burst`: bench/delivery-burst.ts's burst of `events` (the relay after one write takes up to 800), per event delivered;
 * with `besideLoans` > 0, while another tenant starts that many loans a second (bench/steady-loans.ts).
 */
async function burst(stack: Stack, apiKey: string, events: number, besideLoans: number, newKey: () => Promise<string>): Promise<Result> {
  let steady: ReturnType<typeof steadyLoans> | undefined;
  if (besideLoans > 0) {
    const headers = { "x-api-key": await newKey(), "content-type": "application/json" };
    const me = (await (await fetch(`${stack.baseUrl}/v1/me`, { headers })).json()) as { merchantConfigs: { loanProductId: string }[] };
    let n = 0;
    steady = steadyLoans(besideLoans, async () => {
      const res = await fetch(`${stack.baseUrl}/v1/loans`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          loanProductId: me.merchantConfigs[0]!.loanProductId,
          borrowerRef: `beside-${n % 1000}`,
          borrowerWalletAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
          chain: "POLYGON_AMOY",
          principalAmount: "10.00",
          idempotencyKey: `beside-${Date.now()}-${n++}`,
        }),
      });
      if (res.status !== 201) throw new Error(`POST /v1/loans answered ${res.status} ${await res.text()}`);
    });
    await Bun.sleep(1_000);
  }
  const b = await deliveryBurst(stack, { apiKey, events, delaysOf: () => ({ p50: 0, p99: 0, max: 0 }) }).finally(() => steady?.stop());
  if (!b) throw new Error("the burst could not start");
  return { requests: { total: b.arrived, average: b.perSecond }, "2xx": b.arrived, non2xx: 0 } as unknown as Result;
}

function report(name: string, profile: Profile, requests: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (const [k, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[k] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  const byPkg = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const f = n.callFrame;
    const fn = `${f.functionName || "(anon)"} ${f.url.split("/").slice(-1)[0]}:${f.lineNumber}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    const pkg = f.functionName.startsWith("(") ? f.functionName : f.url ? "js" : "native";
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
  }
  const busy = total - (byPkg.get("(idle)") ?? 0) - (byPkg.get("(program)") ?? 0);
  console.log(
    `\n${name}: ${(total / 1000).toFixed(0)} ms sampled, busy ${(busy / 1000).toFixed(0)} ms = ${(busy / 1000 / requests).toFixed(2)} ms per request`,
  );
  for (const [k, v] of [...byPkg].sort((a, b) => b[1] - a[1])) console.log(`  ${k.padEnd(20)} ${((100 * v) / total).toFixed(1)}%`);
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 40))) {
    console.log(`  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000 / requests).toFixed(3)} ms  ${k}`);
  }
  if (process.env.PROFILE_INCLUSIVE) inclusive(profile, byId, self, busy, requests);
  if (process.env.PROFILE_SOURCES) sources(name, byId, self, busy, requests);
}

/**
 * `PROFILE_SOURCES=1`: the bundle's self time by where its code came from
 * (the worker's dist/<worker>/index.js.map): a package of node_modules, or a
 * folder of this repository. The runtime's own (native, workerd's internal
 * modules) is left out: the top functions above show it.
 */
function sources(name: string, byId: Map<number, Node>, self: Map<number, number>, busy: number, requests: number) {
  const worker = ["api", "cron", "embed", "webhooks"].find((w) => name.includes(`svc-credit-${w}`));
  if (!worker) return;
  const map = new TraceMap(readFileSync(`dist/${worker}/index.js.map`, "utf8"));
  const parent = new Map<number, number>();
  for (const n of byId.values()) for (const c of n.children ?? []) parent.set(c, n.id);
  const origin = new Map<number, { group: string; at: string } | null>();
  /** Where a frame's code came from (null: not the bundle's). */
  const originOf = (id: number) => {
    if (origin.has(id)) return origin.get(id)!;
    const f = byId.get(id)!.callFrame;
    let found: { group: string; at: string } | null = null;
    if (f.url.endsWith("index.js")) {
      const pos = originalPositionFor(map, { line: f.lineNumber + 1, column: f.columnNumber });
      // Repository paths come back absolute (the map's root), packages' as node_modules/<name>/…; drizzle-orm's own
      // source maps name its files node_modules/src/….
      const at = (pos.source ?? "(unmapped)")
        .replace(`${process.cwd()}/`, "")
        .replace(/^(\.\.\/)+/, "")
        .replace(/^node_modules\/src\//, "node_modules/drizzle-orm/");
      const pkg = at.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
      const group = pkg
        ? pkg[1]!
        : at
            .split("/")
            .slice(0, at.startsWith("workers/") || at.startsWith("shared/") ? 2 : 1)
            .join("/");
      found = { group, at: `${f.functionName || "(anon)"} ${at}:${pos.line}` };
    }
    origin.set(id, found);
    return found;
  };
  const bySource = new Map<string, number>();
  /** A package's self time by the first frame of this repository's code above it: who asked for that work. */
  const byCaller = new Map<string, Map<string, number>>();
  for (const [id, us] of self) {
    const o = originOf(id);
    if (!o) continue;
    bySource.set(o.group, (bySource.get(o.group) ?? 0) + us);
    if (!/^(shared|db|workers)\b/.test(o.group)) {
      let caller = "(none)";
      for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
        const up = originOf(at);
        if (up && /^(shared|db|workers)\b/.test(up.group)) {
          caller = up.at;
          break;
        }
      }
      const callers = byCaller.get(o.group) ?? new Map<string, number>();
      callers.set(caller, (callers.get(caller) ?? 0) + us);
      byCaller.set(o.group, callers);
    }
  }
  const line = (k: string, v: number) => `${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000 / requests).toFixed(3)} ms  ${k}`;
  console.log("\n  self time by source (the bundle's code):");
  for (const [k, v] of [...bySource].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${line(k, v)}`);
  for (const [pkg] of [...bySource]
    .filter(([k]) => byCaller.has(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)) {
    console.log(`\n  ${pkg}'s self time by the repository's code that called it:`);
    for (const [k, v] of [...byCaller.get(pkg)!].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${line(k, v)}`);
  }
}

/** `PROFILE_INCLUSIVE=1`: the named functions of the bundle by inclusive time (self time of everything they called). */
function inclusive(profile: Profile, byId: Map<number, Node>, self: Map<number, number>, busy: number, requests: number) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)!.callFrame.functionName.startsWith("(")) continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.functionName || !f.url.endsWith("index.js")) continue;
      const key = `${f.functionName} :${f.lineNumber}`;
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + us);
    }
  }
  console.log("\n  inclusive (named functions of the bundle):");
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_INCLUSIVE) || 60)) {
    console.log(`  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000 / requests).toFixed(3)} ms  ${k}`);
  }
}

async function inspector(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 1;
  const waiting = new Map<number, (v: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)!(msg.result);
      waiting.delete(msg.id);
    }
  };
  return {
    send: (method: string, params: unknown = {}) =>
      new Promise<unknown>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}
