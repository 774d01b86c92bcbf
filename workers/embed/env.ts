import type { AgreementChallengeObject } from "../../shared/agreements/challenge-object.ts";
import type { ChallengeStore } from "../../shared/agreements/challenge-store.ts";
import type { ContractSignatureVerifier } from "../../shared/chains/chain-port.ts";
import type { Db } from "../../db/create-db.ts";
import type { ReadSessions } from "../../db/read-session.ts";
import type { Clock } from "../../shared/domain/clock.ts";
import type { ProgramContext } from "../../shared/embed/program-context.ts";
import type { LoanWriter } from "../../shared/loans/loan-commands.ts";
import type { LoanObject } from "../../shared/loans/loan-object.ts";
import type { Logger } from "../../shared/observability/logger.ts";
import type { DeliveryMessage, DeliveryQueue } from "../../shared/webhooks/messages.ts";

import type { FailureBudget, RateLimiter } from "../../shared/http/failure-budget.ts";
import type { LiveChains } from "../../shared/chains/live/live-config.ts";

export type { RateLimiter };

/** Secrets the embed worker cannot run without, as its wrangler.toml declares them (`[secrets] required`). */
export const REQUIRED_SECRETS = ["SECRETS_KEY"] as const;

/** Bindings and vars of the embed worker (workers/embed/wrangler.toml). */
export type EmbedEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  LOANS: DurableObjectNamespace<LoanObject>;
  AGREEMENT_CHALLENGES: DurableObjectNamespace<AgreementChallengeObject>;
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  EMBED_LIMITER: RateLimiter;
  /** Per client IP: 404s (unknown embed keys or loans) allowed a minute. */
  EMBED_MISS_LIMITER: RateLimiter;
  /** The widget's host (`{embed_url}` host[:port]): the domain TON Connect signatures name. */
  EMBED_HOST?: string;
  /** WalletConnect Cloud project id; empty or unset: the widget offers no WalletConnect. */
  WALLETCONNECT_PROJECT_ID?: string;
  /** The platform's secret (as the api and webhooks workers have it); wallet sessions are MAC'ed under a key derived from it. */
  SECRETS_KEY?: string;
};

export type EmbedDeps = {
  db: Db;
  /** D1 read replication for read-only routes (db/read-session.ts); absent: every read on `db`. */
  readSessions?: ReadSessions;
  clock: Clock;
  challenges: ChallengeStore;
  writer: LoanWriter;
  queue: DeliveryQueue;
  limiter: RateLimiter;
  limitPeriodSeconds: number;
  /** Each client IP's budget of 404s (embed-limits.ts). */
  misses: FailureBudget;
  log: Logger;
  widgetHost: string | null;
  walletConnectProjectId: string | null;
  /**
   * A chain adapter that can call the chain, for smart-contract wallet
   * signatures (ERC-1271/ERC-6492) at accept; null: EOA signatures only.
   */
  chain: ContractSignatureVerifier | null;
  /** The secret wallet-session challenges and tokens are MAC'ed under (a key derived from it). */
  sessionSecret: string;
  /** This deployment's live chains (token and pool of repayment instructions); absent: none configured. */
  liveChains: LiveChains;
};

/** Hono's typed environment for the embed worker. */
export type EmbedAppEnv = {
  Bindings: EmbedEnv;
  Variables: { requestId: string; deps: EmbedDeps; program: ProgramContext };
};
