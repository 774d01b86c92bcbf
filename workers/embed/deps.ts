import { oncePerEnv } from "../../shared/config/once-per-env.ts";
import { ConfigurationError } from "../../shared/config/required-secrets.ts";
import { controlDatabase, tenantDatabase } from "../../db/databases.ts";
import { createDb } from "../../db/create-db.ts";
import { d1ReadSessions } from "../../db/read-session.ts";
import { durableChallengeStore } from "../../shared/agreements/durable-challenge-store.ts";
import { type LiveChainEnv, liveChainSettings } from "../../shared/chains/live/live-config.ts";
import { DEV_SECRETS_KEY } from "../../shared/crypto/secret-box.ts";
import { systemClock } from "../../shared/domain/clock.ts";
import { durableLoanWriter } from "../../shared/loans/durable-loan-writer.ts";
import { failureBudget } from "../../shared/http/failure-budget.ts";
import { consoleLogger } from "../../shared/observability/logger.ts";
import type { EmbedDeps, EmbedEnv } from "./env.ts";

/** IPs over their miss budget, remembered by this worker instance until their window ends. */
const blockedIps = new Map<string, number>();

export function embedDepsFromEnv(env: EmbedEnv): EmbedDeps {
  // Fail closed: a deployment without its secret must not MAC wallet sessions with a known default.
  const sessionSecret = env.SECRETS_KEY && env.SECRETS_KEY.length >= 32 ? env.SECRETS_KEY : env.ENVIRONMENT === "development" ? DEV_SECRETS_KEY : null;
  if (!sessionSecret) throw new ConfigurationError("This worker is not configured: SECRETS_KEY (32+ characters)");
  return {
    // Programs by embed key (control plane) and the program's tenant on the one database; with shards, the tenant's after the key.
    db: createDb(controlDatabase(env)),
    readSessions: d1ReadSessions(tenantDatabase(env)),
    clock: systemClock,
    challenges: durableChallengeStore(env.AGREEMENT_CHALLENGES),
    writer: durableLoanWriter(env.LOANS),
    queue: {
      send: async (body, options) => void (await env.WEBHOOK_DELIVERIES.send(body, options)),
      sendBatch: async (messages) => void (await env.WEBHOOK_DELIVERIES.sendBatch(messages)),
    },
    limiter: env.EMBED_LIMITER,
    limitPeriodSeconds: 60,
    misses: failureBudget(env.EMBED_MISS_LIMITER, { prefix: "embed-miss", periodSeconds: 60, blocked: blockedIps }),
    log: consoleLogger,
    widgetHost: env.EMBED_HOST ?? null,
    walletConnectProjectId: env.WALLETCONNECT_PROJECT_ID || null,
    // The sandbox chains are simulated and execute no contracts, and there is no live EVM
    // adapter yet: EOA signatures only. The live adapter brings `evmContractSignatures`.
    chain: null,
    sessionSecret,
    liveChains: liveChainSettings(env as EmbedEnv & LiveChainEnv),
  };
}

/** `embedDepsFromEnv` once per env object (an isolate's bindings): shared/config/once-per-env.ts. */
export const embedDepsOfIsolate: (env: EmbedEnv) => EmbedDeps = oncePerEnv(embedDepsFromEnv);
