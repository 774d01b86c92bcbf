import { startStack } from "../stack.ts";

/**
 * The stack as a process of its own, for the chaos suite to SIGKILL and
 * start again on the same data. Its options come as JSON in CHAOS_STACK
 * (port, embedPort, persistDir, outDir, cronIntervalMs, vars); it prints
 * `READY <base_url>` once it serves.
 */
const options = JSON.parse(process.env.CHAOS_STACK ?? "{}");
const stack = await startStack({
  logLevel: "none",
  build: false,
  ...options,
  ratelimits: Object.fromEntries(
    ["IP_LIMITER", "API_KEY_LIMITER", "TENANT_LIMITER", "SIGNUP_LIMITER", "LOGIN_LIMITER", "AUTH_FAILURE_LIMITER"].map((n) => [n, { limit: 1_000_000 }]),
  ),
});
console.log(`READY ${stack.baseUrl}`);
