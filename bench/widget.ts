import autocannon from "autocannon";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { launchBrowser, servePage } from "../workers/local/browser.ts";
import { installInjectedWallet } from "../workers/local/injected-wallet.ts";
import { signUpMerchant, startTestStack } from "../workers/local/integration.ts";
import { merchantPage, widgetFrame } from "../workers/local/widget-harness.ts";

/**
 * `npm run bench:widget`: the widget on the bundled workers in Miniflare.
 * Not a test: it prints numbers to compare runs.
 *
 * 1. `GET {embed_url}/embed/<key>` (the iframe page: program lookup, branding,
 *    CSP) and `GET /v1/embed/<key>/config`, with autocannon.
 * 2. Draws: quote → EIP-191 signature (viem, in this process) → accept, each
 *    by a fresh wallet, BENCH_DRAW_WORKERS at a time for BENCH_SECONDS; draws
 *    per second and the latency of each call; every loan must be ACTIVE.
 * 3. In Chromium (360 px, the injected test wallet): from navigation of the
 *    merchant page to the widget's "Connect" button, and from "Sign and
 *    borrow" to "Funds sent", BENCH_BROWSER_RUNS times (median, max).
 *
 * Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (10), BENCH_DRAW_WORKERS (4), BENCH_BROWSER_RUNS (5).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const drawWorkers = Number(process.env.BENCH_DRAW_WORKERS ?? 4);
const browserRuns = Number(process.env.BENCH_BROWSER_RUNS ?? 5);
const UNLIMITED = { limit: 100_000_000, period: 60 as const };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0);
};

const stack = await startTestStack({ ratelimits: { IP_LIMITER: UNLIMITED, API_KEY_LIMITER: UNLIMITED, TENANT_LIMITER: UNLIMITED, EMBED_LIMITER: UNLIMITED } });
try {
  const m = await signUpMerchant(stack, "Bench Shop");
  const program = (await m.dashboard("/v1/me")).body.widgetPrograms[0];
  const page = servePage(merchantPage(stack.embedUrl, m.embedKey, "WEB"), { hostname: "127.0.0.1" });
  const put = await m.dashboard(`/v1/widget-programs/${program.id}`, {
    method: "PUT",
    json: { name: program.name, merchantConfigId: program.merchantConfigId, allowedOrigins: [page.origin] },
  });
  if (put.status !== 200) throw new Error(`program: ${put.status}`);
  await m.dashboard("/v1/settings", {
    method: "PUT",
    json: { requiresKycBeforeFunding: false, branding: { companyName: "Bench Shop", logoUrl: null, primaryColor: null, supportEmail: null, termsUrl: null } },
  });
  const pool = await m.api("/v1/sandbox/liquidity", { method: "PUT", json: { available: "100000000.00" } });
  if (pool.status !== 200) throw new Error(`liquidity: ${pool.status} ${JSON.stringify(pool.body)}`);

  // 1. Pages.
  const rows: string[][] = [];
  for (const [name, url] of [
    ["GET /embed/<key> (page)", `${stack.embedUrl}/embed/${m.embedKey}?parent=${encodeURIComponent(page.origin)}`],
    ["GET …/config", `${stack.embedUrl}/v1/embed/${m.embedKey}/config`],
  ] as const) {
    const r = await autocannon({ url, connections, duration: seconds });
    rows.push([name, r.requests.average.toFixed(0), String(r.latency.p50), String(r.latency.p99), String(r["2xx"]), String(r.non2xx)]);
  }
  console.log(["endpoint".padEnd(26), "req/s".padStart(7), "p50 ms".padStart(7), "p99 ms".padStart(7), "2xx".padStart(7), "non-2xx".padStart(8)].join(" "));
  for (const r of rows)
    console.log([r[0]!.padEnd(26), r[1]!.padStart(7), r[2]!.padStart(7), r[3]!.padStart(7), r[4]!.padStart(7), r[5]!.padStart(8)].join(" "));

  // 2. Draws through the API, as the widget makes them.
  const base = `/v1/embed/${m.embedKey}`;
  const timings = { quote: [] as number[], accept: [] as number[], draw: [] as number[] };
  const loanIds: string[] = [];
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: drawWorkers }, async () => {
      while (performance.now() < deadline) {
        const account = privateKeyToAccount(generatePrivateKey());
        const t0 = performance.now();
        const q = await stack.fetch(`${base}/quote`, {
          json: { walletAddress: account.address, amount: "50.00", tenureDays: 7 },
          headers: { origin: page.origin },
        });
        const t1 = performance.now();
        if (q.status !== 200) {
          failures++;
          continue;
        }
        const walletSignature = await account.signMessage({ message: q.body.agreementChallenge.message });
        const t2 = performance.now();
        const a = await stack.fetch(`${base}/accept`, {
          json: {
            walletAddress: account.address,
            amount: "50.00",
            tenureDays: 7,
            agreementChallengeId: q.body.agreementChallenge.id,
            walletSignature,
            channel: "WEB",
          },
          headers: { origin: page.origin },
        });
        const t3 = performance.now();
        if (a.status !== 201) {
          failures++;
          continue;
        }
        timings.quote.push(t1 - t0);
        timings.accept.push(t3 - t2);
        timings.draw.push(t3 - t0);
        loanIds.push(a.body.loan.id);
      }
    }),
  );
  let active = 0;
  for (const id of loanIds) if ((await m.api(`/v1/loans/${id}`)).body.status === "ACTIVE") active++;
  console.log(
    `\ndraws (${drawWorkers} at a time, ${seconds} s): ${(loanIds.length / seconds).toFixed(1)} draws/s; quote p50 ${pct(timings.quote, 50)} ms p99 ${pct(timings.quote, 99)} ms; ` +
      `accept (create + underwrite + fund) p50 ${pct(timings.accept, 50)} ms p99 ${pct(timings.accept, 99)} ms; ${loanIds.length} loans, ${active} ACTIVE, ${failures} failed`,
  );
  if (active !== loanIds.length || failures > 0) process.exitCode = 1;

  // 3. The widget in Chromium.
  const browser = await launchBrowser();
  const toConnect: number[] = [];
  const toFunded: number[] = [];
  try {
    for (let i = 0; i < browserRuns; i++) {
      const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
      await installInjectedWallet(context, { account: privateKeyToAccount(generatePrivateKey()), chainId: 80002, sendRawTransaction: async () => "0x" });
      const tab = await context.newPage();
      const t0 = performance.now();
      await tab.goto(page.origin);
      const frame = await widgetFrame(tab, stack.embedUrl);
      await frame.getByRole("button", { name: "Connect Test Wallet" }).waitFor();
      toConnect.push(performance.now() - t0);
      await frame.getByRole("button", { name: "Connect Test Wallet" }).click();
      await frame.getByLabel("I have read and accept the credit line agreement").check();
      await frame.getByRole("button", { name: "Continue" }).click();
      await frame.getByLabel("Amount (USDC)").fill("25");
      await frame.getByTestId("total-due").waitFor();
      const t1 = performance.now();
      await frame.getByRole("button", { name: "Sign and borrow" }).click();
      await frame.getByRole("heading", { name: "Funds sent" }).waitFor({ timeout: 30_000 });
      toFunded.push(performance.now() - t1);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  console.log(
    `browser (Chromium, ${browserRuns} runs): merchant page → widget ready ${pct(toConnect, 50)} ms median, ${pct(toConnect, 100)} ms max; ` +
      `"Sign and borrow" → "Funds sent" ${pct(toFunded, 50)} ms median, ${pct(toFunded, 100)} ms max`,
  );
  page.close();
} finally {
  await stack.dispose();
}
