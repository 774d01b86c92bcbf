import { DEV_OPERATOR_KEY } from "../../shared/auth/operator-key.ts";
import { LIVE_CHAIN_ENV_KEYS } from "../../shared/chains/live/live-config.ts";
import { startStack } from "./stack.ts";

/**
 * `npm run dev`: the four workers on this machine, offline, data kept in
 * `.data/` between runs. Env: PORT (8787), EMBED_PORT (8788),
 * CRON_INTERVAL_SECONDS (5; 0 turns the cron off), LOG_LEVEL (info),
 * DATA_DIR (.data), and the live chains' variables (live-config.ts), which
 * `npm run dev:live` sets.
 */
const port = Number(process.env.PORT ?? 8787);
const embedPort = Number(process.env.EMBED_PORT ?? 8788);
const cronSeconds = Number(process.env.CRON_INTERVAL_SECONDS ?? 5);
const dataDir = process.env.DATA_DIR ?? ".data";
const logLevel = (process.env.LOG_LEVEL ?? "info") as "none" | "error" | "warn" | "info" | "debug";

const started = performance.now();
const stack = await startStack({
  port,
  embedPort,
  persistDir: dataDir,
  cronIntervalMs: cronSeconds * 1000,
  logLevel,
  logRequests: logLevel === "info" || logLevel === "debug",
  // Locally, webhook retries come after seconds, not minutes (production: 30 s, then 120 s).
  vars: {
    WEBHOOK_RETRY_DELAYS_SECONDS: process.env.WEBHOOK_RETRY_DELAYS_SECONDS ?? "5,15",
    EMBED_HOST: `127.0.0.1:${embedPort}`,
    // Unset: the api worker uses svc_operator_dev (development only).
    ...(process.env.OPERATOR_KEY ? { OPERATOR_KEY: process.env.OPERATOR_KEY } : {}),
    // Live chains (POLYGON_RPC_URL, …; `npm run dev:live` sets them to its Anvil nodes).
    ...Object.fromEntries(LIVE_CHAIN_ENV_KEYS.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
  },
});
const base = stack.baseUrl;

console.log(`
svc credit local stack
  {base_url}  ${base}   (api worker; /v1/embed/* goes to the embed worker)
  {embed_url} ${stack.embedUrl}   (embed worker: widget pages)
  API docs    ${base}/docs

Started in ${Math.round(performance.now() - started)} ms; data in ${dataDir}/; cron fired ${cronSeconds > 0 ? `every ${cronSeconds} s` : "never (CRON_INTERVAL_SECONDS=0)"}.

Credentials:
  TOKEN=$(curl -s -X POST ${base}/v1/auth/signup -H 'content-type: application/json' \\
    -d '{"email":"owner@merchant.example","password":"correct horse battery","companyName":"Acme Pay"}' \\
    | sed -E 's/.*"accessToken":"([^"]+)".*/\\1/')
  KEY=$(curl -s -X POST ${base}/v1/api-keys -H "authorization: Bearer $TOKEN" \\
    -H 'content-type: application/json' -d '{"name":"backend"}' \\
    | sed -E 's/.*"key":"([^"]+)".*/\\1/')
  curl -s ${base}/v1/me -H "x-api-key: $KEY"
  (The data persists in ${dataDir}/: on a later run the signup answers 409; log in with
  POST ${base}/v1/auth/login {"email","password"} instead, or delete ${dataDir}/ to start over.)

Platform operator (go-live KYB decisions, commercial terms):
  curl -s ${base}/v1/operator/tenants -H "x-operator-key: ${process.env.OPERATOR_KEY ? "$OPERATOR_KEY" : DEV_OPERATOR_KEY}"${process.env.OPERATOR_KEY ? "" : "   (the development default; set OPERATOR_KEY to use your own)"}

Ctrl-C stops.
`);

let stopping = false;
async function stop() {
  if (stopping) process.exit(130); // a second Ctrl-C: do not wait
  stopping = true;
  console.log("stopping…");
  await stack.dispose(); // stops the cron timer, lets a running tick finish, stops workerd
  console.log("stopped");
  process.exit(0);
}
// Miniflare's exit hook answers SIGINT by killing workerd and exiting at once,
// before an async dispose could run; this process owns its signals instead.
// (Miniflare's `exit` hook remains the safety net if we crash.)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.removeAllListeners(signal);
  process.on(signal, stop);
}
