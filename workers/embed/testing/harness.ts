import type { ContractSignatureVerifier } from "../../../shared/chains/chain-port.ts";
import { failureBudget } from "../../../shared/http/failure-budget.ts";
import { consoleLogger } from "../../../shared/observability/logger.ts";
import { memoryRateLimiter } from "../../../shared/testing/memory-rate-limiter.ts";
import type { TestApp } from "../../../shared/testing/harness.ts";
import { createEmbedApp } from "../app.ts";
import type { EmbedDeps, EmbedEnv } from "../env.ts";

/**
 * The embed app over the api harness's database, clock, loan writer,
 * challenge store and queue, so a test signs up and configures through the
 * api and draws through the embed API.
 */
export function createEmbedTestApp(
  t: TestApp,
  options: { limit?: number; missLimit?: number; walletConnectProjectId?: string; chain?: ContractSignatureVerifier } = {},
) {
  const deps: EmbedDeps = {
    db: t.db,
    clock: t.clock,
    challenges: t.deps.challenges,
    writer: t.deps.writer,
    queue: t.deps.queue,
    limiter: memoryRateLimiter(options.limit ?? 10_000, 60_000),
    limitPeriodSeconds: 60,
    misses: failureBudget(memoryRateLimiter(options.missLimit ?? 10_000, 60_000), { prefix: "embed-miss", periodSeconds: 60, blocked: new Map() }),
    log: consoleLogger,
    widgetHost: "embed.svc-credit.test",
    walletConnectProjectId: options.walletConnectProjectId ?? null,
    // The api's chain port (simulated: no contract signatures) unless a test brings one that calls a chain.
    chain: options.chain ?? t.deps.chain,
    sessionSecret: t.deps.secretsKey,
    liveChains: t.deps.liveChains,
  };
  const app = createEmbedApp(() => deps);
  async function request<T = any>(
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers["content-type"] ??= "application/json";
    const sent = init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
    const res = await app.request(path, { method, headers, body: sent }, {} as EmbedEnv);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: body as T, headers: res.headers };
  }
  return { app, deps, request };
}
