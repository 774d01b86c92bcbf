import { z } from "zod";
import { oncePerEnv } from "../../shared/config/once-per-env.ts";
import { controlDatabase, tenantDatabase } from "../../db/databases.ts";
import { createDb, type Db } from "../../db/create-db.ts";
import { d1ReadSessions, type ReadSessions } from "../../db/read-session.ts";
import type { AgreementChallengeObject } from "../../shared/agreements/challenge-object.ts";
import { durableChallengeStore } from "../../shared/agreements/durable-challenge-store.ts";
import type { ChallengeStore } from "../../shared/agreements/challenge-store.ts";
import type { ChainPort } from "../../shared/chains/chain-port.ts";
import { chainPortFromEnv, secretsKeyOf } from "../../shared/chains/chain-port-from-env.ts";
import { type LiveChainEnv, type LiveChains, liveChainSettings } from "../../shared/chains/live/live-config.ts";
import { durableSimulatedChains } from "../../shared/chains/simulated/durable-simulated-chains.ts";
import type { EvmSenderObject } from "../../shared/chains/evm/live/evm-sender-object.ts";
import type { SimulatedChainObject } from "../../shared/chains/simulated/simulated-chain-object.ts";
import type { SimulatedChains } from "../../shared/chains/simulated/sim-chains.ts";
import { DEV_OPERATOR_KEY } from "../../shared/auth/operator-key.ts";
import { systemClock, type Clock } from "../../shared/domain/clock.ts";
import type { DeliveryMessage, DeliveryQueue } from "../../shared/webhooks/messages.ts";
import type { LoanWriter } from "../../shared/loans/loan-commands.ts";
import { durableLoanWriter } from "../../shared/loans/durable-loan-writer.ts";
import type { LoanObject } from "../../shared/loans/loan-object.ts";
import { consoleLogger, type Logger } from "../../shared/observability/logger.ts";
import { failureBudget, type FailureBudget, type RateLimiter } from "../../shared/http/failure-budget.ts";
import { mailProviderFromEnv, type MailProvider } from "../../shared/notifications/mail-provider.ts";
import { ConfigurationError } from "../../shared/config/required-secrets.ts";

/** Secrets the api worker cannot run without, as its wrangler.toml declares them (`[secrets] required`). */
export const REQUIRED_SECRETS = ["JWT_SECRET", "SECRETS_KEY", "MAIL_API_KEY"] as const;

/** The Workers rate-limiting binding's shape; tests pass an in-memory one. */
export type { RateLimiter };

/** Bindings and vars of the api worker (wrangler.toml at the repository root). */
export type ApiEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  JWT_SECRET?: string;
  JWT_TTL_SECONDS?: string;
  RATE_LIMIT_PERIOD_SECONDS?: string;
  API_KEY_LIMITER: RateLimiter;
  IP_LIMITER: RateLimiter;
  /** Per tenant, over all its keys and users (`tenant:<id>`). */
  TENANT_LIMITER: RateLimiter;
  /** Per client IP, signups only (`signup:<ip>`). */
  SIGNUP_LIMITER: RateLimiter;
  /** Per account, logins (`login:<lower-cased e-mail>`). */
  LOGIN_LIMITER: RateLimiter;
  /** Per client IP, requests whose credentials resolve to nobody (`auth-fail:<ip>`). */
  AUTH_FAILURE_LIMITER: RateLimiter;
  /** `{base_url}` for links in e-mail (verification); unset: the origin the request came to. */
  BASE_URL?: string;
  MAIL_API_URL?: string;
  /** Worker secret. */
  MAIL_API_KEY?: string;
  MAIL_FROM?: string;
  LOANS: DurableObjectNamespace<LoanObject>;
  AGREEMENT_CHALLENGES: DurableObjectNamespace<AgreementChallengeObject>;
  /** Producer of the webhook deliveries Queue (the relay enqueues right after a request commits). */
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  /** One SimulatedChainObject per sandbox tenant and chain (`<tenantId>:<chain>`). */
  SIM_CHAINS: DurableObjectNamespace<SimulatedChainObject>;
  /** One EvmSenderObject per live EVM sender (`<chain>:<address>`): its nonces and funding transactions. */
  EVM_SENDERS?: DurableObjectNamespace<EvmSenderObject>;
  /** Worker secret: AES key for secrets kept at rest (webhook signing secrets). */
  SECRETS_KEY?: string;
  /** The widget host ({embed_url}): a TON Connect domain API agreements may name too. */
  EMBED_HOST?: string;
  /** Worker secret: the platform operator's key (`x-operator-key` on /v1/operator/*). */
  OPERATOR_KEY?: string;
} & LiveChainEnv;

export type ApiDeps = {
  db: Db;
  /** D1 read replication for read-only routes (db/read-session.ts); absent: every read on `db`. */
  readSessions?: ReadSessions;
  clock: Clock;
  environment: "development" | "production";
  jwtSecret: string;
  jwtTtlSeconds: number;
  limiters: {
    /** Per API key or dashboard user. */
    apiKey: RateLimiter;
    /** Per client IP on routes without credentials. */
    ip: RateLimiter;
    /** Per tenant, on every authenticated request (all its keys and users together). */
    tenant: RateLimiter;
    /** Per client IP, signups. */
    signup: RateLimiter;
    /** Per account (e-mail), logins. */
    login: RateLimiter;
    periodSeconds: number;
  };
  /** Each client IP's budget of failed authentications (middleware/auth.ts). */
  authFailures: FailureBudget;
  /** Account e-mail (verification links); notification e-mail is the webhooks worker's. */
  mail: MailProvider;
  /** `{base_url}` for links in e-mail; null: the request's origin under development, elsewhere 503 on the routes that mail a link (routes/auth/base-url.ts). */
  baseUrl: string | null;
  log: Logger;
  chain: ChainPort;
  /** The live chains this deployment has a node for, with their token, pool and confirmations (live-config.ts). */
  liveChains: LiveChains;
  /** The sandbox chains themselves (faucet, transfers, signed transactions). */
  simChains: SimulatedChains;
  /** The single writer of each loan (its tenant's loan objects, durable-loan-writer.ts). */
  writer: LoanWriter;
  /** Single-use agreement challenges (a Durable Object per challenge). */
  challenges: ChallengeStore;
  /** The webhook deliveries Queue. */
  queue: DeliveryQueue;
  secretsKey: string;
  /** The widget host (EMBED_HOST), a TON Connect domain of API agreements; null when not configured. */
  widgetHost?: string | null;
  /** The platform operator's key (OPERATOR_KEY; `svc_operator_dev` under development); absent: operator routes answer 401. */
  operatorKey?: string | null;
};

/** Only `npm run dev` and tests may run without a configured JWT secret. */
const DEV_JWT_SECRET = "dev-only-jwt-secret-never-used-in-deployments";

const EnvSchema = z.object({
  ENVIRONMENT: z.enum(["development", "production"]).default("production"),
  JWT_SECRET: z.string().min(32).optional(),
  SECRETS_KEY: z.string().min(32).optional(),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  RATE_LIMIT_PERIOD_SECONDS: z.coerce.number().int().min(1).default(60),
  BASE_URL: z.url().optional(),
  MAIL_API_URL: z.url().optional(),
  MAIL_API_KEY: z.string().min(1).optional(),
  MAIL_FROM: z.string().min(3).optional(),
  OPERATOR_KEY: z.string().min(16).optional(),
});

/** IPs over their failed-authentication budget, remembered by this worker instance until their window ends. */
const authFailureBlocks = new Map<string, number>();

/** Parses the worker's env once per request (cheap) and builds the verbs' dependencies. */
export function depsFromEnv(env: ApiEnv): ApiDeps {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    // Which settings, never their values.
    const names = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];
    throw new ConfigurationError(`This worker is not configured: invalid ${names.join(", ")}`);
  }
  const { ENVIRONMENT, JWT_SECRET, SECRETS_KEY, JWT_TTL_SECONDS, RATE_LIMIT_PERIOD_SECONDS, BASE_URL, OPERATOR_KEY } = parsed.data;
  const jwtSecret = JWT_SECRET ?? (ENVIRONMENT === "development" ? DEV_JWT_SECRET : undefined);
  // Fail closed: a deployment without its secret must not sign tokens with a known default.
  if (!jwtSecret) throw new ConfigurationError("JWT_SECRET is not configured");
  const secretsKey = secretsKeyOf({ ENVIRONMENT, SECRETS_KEY });
  if (!secretsKey) throw new ConfigurationError("SECRETS_KEY is not configured");
  // The control plane and the caller's tenant on the one database; with shards, routes take the tenant's after authentication.
  const db = createDb(controlDatabase(env));
  const readSessions = d1ReadSessions(tenantDatabase(env));
  const simChains = durableSimulatedChains(env.SIM_CHAINS);
  return {
    db,
    readSessions,
    clock: systemClock,
    environment: ENVIRONMENT,
    jwtSecret,
    jwtTtlSeconds: JWT_TTL_SECONDS,
    limiters: {
      apiKey: env.API_KEY_LIMITER,
      ip: env.IP_LIMITER,
      tenant: env.TENANT_LIMITER,
      signup: env.SIGNUP_LIMITER,
      login: env.LOGIN_LIMITER,
      periodSeconds: RATE_LIMIT_PERIOD_SECONDS,
    },
    authFailures: failureBudget(env.AUTH_FAILURE_LIMITER, { prefix: "auth-fail", periodSeconds: RATE_LIMIT_PERIOD_SECONDS, blocked: authFailureBlocks }),
    mail: mailProviderFromEnv(parsed.data, db, (url, init) => fetch(url, init)),
    baseUrl: BASE_URL ? BASE_URL.replace(/\/+$/, "") : null,
    log: consoleLogger,
    chain: chainPortFromEnv(env, db, { simChains }),
    liveChains: liveChainSettings(env),
    simChains,
    writer: durableLoanWriter(env.LOANS),
    challenges: durableChallengeStore(env.AGREEMENT_CHALLENGES),
    queue: {
      send: async (body, options) => void (await env.WEBHOOK_DELIVERIES.send(body, options)),
      sendBatch: async (messages) => void (await env.WEBHOOK_DELIVERIES.sendBatch(messages)),
    },
    secretsKey,
    widgetHost: env.EMBED_HOST || null,
    // No default outside development: a deployment without the secret has no operator access.
    operatorKey: OPERATOR_KEY ?? (ENVIRONMENT === "development" ? DEV_OPERATOR_KEY : null),
  };
}

/** `depsFromEnv` once per env object (an isolate's bindings): shared/config/once-per-env.ts. */
export const depsOfIsolate: (env: ApiEnv) => ApiDeps = oncePerEnv(depsFromEnv);
