import { z } from "zod";
import { createDb, type Db } from "../../db/create-db.ts";
import type { AgreementChallengeObject } from "../../shared/agreements/challenge-object.ts";
import { durableChallengeStore } from "../../shared/agreements/durable-challenge-store.ts";
import type { ChallengeStore } from "../../shared/agreements/challenge-store.ts";
import type { ChainPort } from "../../shared/chains/chain-port.ts";
import { durableSimulatedChains } from "../../shared/chains/simulated/durable-simulated-chains.ts";
import type { SimulatedChainObject } from "../../shared/chains/simulated/simulated-chain-object.ts";
import type { SimulatedChains } from "../../shared/chains/simulated/sim-chains.ts";
import { simulatedChainPort } from "../../shared/chains/simulated/simulated-chain-port.ts";
import { DEV_SECRETS_KEY } from "../../shared/crypto/secret-box.ts";
import { systemClock, type Clock } from "../../shared/domain/clock.ts";
import type { DeliveryMessage, DeliveryQueue } from "../../shared/webhooks/messages.ts";
import type { LoanWriter } from "../../shared/loans/loan-commands.ts";
import { durableLoanWriter } from "../../shared/loans/durable-loan-writer.ts";
import type { LoanObject } from "../../shared/loans/loan-object.ts";
import { consoleLogger, type Logger } from "../../shared/observability/logger.ts";

/** The Workers rate-limiting binding's shape; tests pass an in-memory one. */
export type RateLimiter = { limit(options: { key: string }): Promise<{ success: boolean }> };

/** Bindings and vars of the api worker (wrangler.toml at the repository root). */
export type ApiEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  JWT_SECRET?: string;
  JWT_TTL_SECONDS?: string;
  RATE_LIMIT_PERIOD_SECONDS?: string;
  API_KEY_LIMITER: RateLimiter;
  IP_LIMITER: RateLimiter;
  LOANS: DurableObjectNamespace<LoanObject>;
  AGREEMENT_CHALLENGES: DurableObjectNamespace<AgreementChallengeObject>;
  /** Producer of the webhook deliveries Queue (the relay enqueues right after a request commits). */
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  /** One SimulatedChainObject per sandbox tenant and chain (`<tenantId>:<chain>`). */
  SIM_CHAINS: DurableObjectNamespace<SimulatedChainObject>;
  /** Worker secret: AES key for secrets kept at rest (webhook signing secrets). */
  SECRETS_KEY?: string;
};

export type ApiDeps = {
  db: Db;
  clock: Clock;
  environment: "development" | "production";
  jwtSecret: string;
  jwtTtlSeconds: number;
  limiters: { apiKey: RateLimiter; ip: RateLimiter; periodSeconds: number };
  log: Logger;
  chain: ChainPort;
  /** The sandbox chains themselves (faucet, transfers, signed transactions). */
  simChains: SimulatedChains;
  /** The single writer of each loan (a Durable Object per loan). */
  loans: LoanWriter;
  /** Single-use agreement challenges (a Durable Object per challenge). */
  challenges: ChallengeStore;
  /** The webhook deliveries Queue. */
  queue: DeliveryQueue;
  secretsKey: string;
};

/** Only `npm run dev` and tests may run without a configured JWT secret. */
const DEV_JWT_SECRET = "dev-only-jwt-secret-never-used-in-deployments";

const EnvSchema = z.object({
  ENVIRONMENT: z.enum(["development", "production"]).default("production"),
  JWT_SECRET: z.string().min(32).optional(),
  SECRETS_KEY: z.string().min(32).optional(),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  RATE_LIMIT_PERIOD_SECONDS: z.coerce.number().int().min(1).default(60),
});

export class ConfigurationError extends Error {}

/** Parses the worker's env once per request (cheap) and builds the verbs' dependencies. */
export function depsFromEnv(env: ApiEnv): ApiDeps {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigurationError("invalid worker configuration");
  const { ENVIRONMENT, JWT_SECRET, SECRETS_KEY, JWT_TTL_SECONDS, RATE_LIMIT_PERIOD_SECONDS } = parsed.data;
  const jwtSecret = JWT_SECRET ?? (ENVIRONMENT === "development" ? DEV_JWT_SECRET : undefined);
  // Fail closed: a deployment without its secret must not sign tokens with a known default.
  if (!jwtSecret) throw new ConfigurationError("JWT_SECRET is not configured");
  const secretsKey = SECRETS_KEY ?? (ENVIRONMENT === "development" ? DEV_SECRETS_KEY : undefined);
  if (!secretsKey) throw new ConfigurationError("SECRETS_KEY is not configured");
  const db = createDb(env.DB);
  const simChains = durableSimulatedChains(env.SIM_CHAINS);
  return {
    db,
    clock: systemClock,
    environment: ENVIRONMENT,
    jwtSecret,
    jwtTtlSeconds: JWT_TTL_SECONDS,
    limiters: { apiKey: env.API_KEY_LIMITER, ip: env.IP_LIMITER, periodSeconds: RATE_LIMIT_PERIOD_SECONDS },
    log: consoleLogger,
    chain: simulatedChainPort(simChains),
    simChains,
    loans: durableLoanWriter(env.LOANS),
    challenges: durableChallengeStore(env.AGREEMENT_CHALLENGES),
    queue: {
      send: async (body, options) => void (await env.WEBHOOK_DELIVERIES.send(body, options)),
      sendBatch: async (messages) => void (await env.WEBHOOK_DELIVERIES.sendBatch(messages)),
    },
    secretsKey,
  };
}
