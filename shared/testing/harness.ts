import { createTestDb } from "../../db/test-db.ts";
import type { Db } from "../../db/create-db.ts";
import { memoryChallengeStore } from "../agreements/challenge-store.ts";
import { memorySimulatedChains } from "../chains/simulated/sim-chains.ts";
import { simulatedChainPort } from "../chains/simulated/simulated-chain-port.ts";
import { fixedClock } from "../domain/clock.ts";
import { inProcessLoanWriter } from "../loans/loan-commands.ts";
import { DEV_SECRETS_KEY } from "../crypto/secret-box.ts";
import { DEV_OPERATOR_KEY } from "../auth/operator-key.ts";
import { memoryDeliveryQueue } from "../webhooks/memory-queue.ts";
import { createApiApp } from "../../workers/api/app.ts";
import type { ApiDeps, ApiEnv } from "../../workers/api/deps.ts";
import type { Logger } from "../observability/logger.ts";
import { memoryRateLimiter } from "./memory-rate-limiter.ts";
import { failureBudget } from "../http/failure-budget.ts";
import { databaseMailbox } from "../notifications/mail-provider.ts";

export type TestResponse<T = any> = { status: number; body: T; headers: Headers };

/**
 * The api app over a fresh in-memory libSQL database, a movable clock and
 * in-memory rate limiters, driven through `app.request()` (tier 2).
 */
export async function createTestApp(
  options: { ipLimit?: number; keyLimit?: number; tenantLimit?: number; signupLimit?: number; loginLimit?: number; authFailureLimit?: number } = {},
) {
  const { db, client, close } = await createTestDb();
  // Starts at the real time: session tokens are checked against the system clock.
  const clock = fixedClock(new Date());
  const logs: string[] = [];
  const log: Logger = {
    info: (msg, f) => logs.push(JSON.stringify({ msg, ...f })),
    error: (msg, f) => logs.push(JSON.stringify({ msg, ...f })),
  };
  const simChains = memorySimulatedChains(clock);
  const deps: ApiDeps = {
    db: db as Db,
    clock,
    environment: "development",
    jwtSecret: "test-secret-test-secret-test-secret!",
    jwtTtlSeconds: 3600,
    limiters: {
      apiKey: memoryRateLimiter(options.keyLimit ?? 10_000, 60_000),
      ip: memoryRateLimiter(options.ipLimit ?? 10_000, 60_000),
      tenant: memoryRateLimiter(options.tenantLimit ?? 10_000, 60_000),
      signup: memoryRateLimiter(options.signupLimit ?? 10_000, 60_000),
      login: memoryRateLimiter(options.loginLimit ?? 10_000, 60_000),
      periodSeconds: 60,
    },
    authFailures: failureBudget(memoryRateLimiter(options.authFailureLimit ?? 10_000, 60_000), { prefix: "auth-fail", periodSeconds: 60, blocked: new Map() }),
    // The local mailbox, as `npm run dev` has it: tests read verification links from it.
    mail: databaseMailbox(db as Db),
    baseUrl: "http://api.svc-credit.test",
    log,
    chain: simulatedChainPort(simChains),
    simChains,
    liveChains: {},
    writer: inProcessLoanWriter({ db, chain: simulatedChainPort(simChains), clock }),
    challenges: memoryChallengeStore(),
    secretsKey: DEV_SECRETS_KEY,
    queue: memoryDeliveryQueue(),
    widgetHost: "embed.svc-credit.test",
    operatorKey: DEV_OPERATOR_KEY,
  };
  const app = createApiApp(() => deps);

  async function request<T = any>(
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.rawBody !== undefined) body = init.rawBody;
    else if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await app.request(path, { method, headers, body }, {} as ApiEnv);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  return { app, db, client, deps, clock, logs, request, close, simChains };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;
