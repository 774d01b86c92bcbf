import type { LiveChainEnv } from "../../shared/chains/live/live-config.ts";
import type { EvmSenderObject } from "../../shared/chains/evm/live/evm-sender-object.ts";
import type { SimulatedChainObject } from "../../shared/chains/simulated/simulated-chain-object.ts";
import type { LoanObject } from "../../shared/loans/loan-object.ts";
import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";
import type { CronJobMessage } from "./cron-messages.ts";

/** Bindings and vars of the cron worker (workers/cron/wrangler.toml). */
export type CronEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  /** The api worker's LoanObject namespace (script_name binding). */
  LOANS: DurableObjectNamespace<LoanObject>;
  /** The cron worker's own jobs queue: the scheduled handler produces, the queue handler consumes (dispatch.ts). */
  CRON_JOBS: Queue<CronJobMessage>;
  /** Producer of the webhook deliveries Queue. */
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  /** The api worker's simulated chains (script_name binding), read by the settlement listener. */
  SIM_CHAINS: DurableObjectNamespace<SimulatedChainObject>;
  /** The api worker's live EVM sender objects (script_name binding): the nonces of funding the cron retries. */
  EVM_SENDERS?: DurableObjectNamespace<EvmSenderObject>;
  /** The webhooks worker's delivery timeout (default 10000): the recovery pass's lease is this plus 5 s. */
  WEBHOOK_TIMEOUT_MS?: string;
  /** Days of history kept (README "Retention"; default 90, at least 30). */
  RETENTION_DAYS?: string;
  /** Worker secret: opens the operator's sealed signers (live funding runs in the loan objects, but the port is built alike). */
  SECRETS_KEY?: string;
} & LiveChainEnv;
