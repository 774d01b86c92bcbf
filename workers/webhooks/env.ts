import type { DeliveryMessage } from "../../shared/webhooks/messages.ts";

/** Secrets the webhooks worker cannot run without, as its wrangler.toml declares them (`[secrets] required`). */
export const REQUIRED_SECRETS = ["SECRETS_KEY", "MAIL_API_KEY"] as const;

/** Bindings and vars of the webhooks worker (workers/webhooks/wrangler.toml). */
export type WebhooksEnv = {
  DB: D1Database;
  ENVIRONMENT?: string;
  /** The deliveries queue; the worker schedules later attempts on it. */
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  /** Worker secret: the AES key that opens endpoint secrets (same value as the api worker's). */
  SECRETS_KEY?: string;
  /** No answer within this fails an attempt (default 10000). */
  WEBHOOK_TIMEOUT_MS?: string;
  /** Delays before attempts 2 and 3, comma-separated seconds (default "30,120"). */
  WEBHOOK_RETRY_DELAYS_SECONDS?: string;
  /** Delays before e-mail retries 2 and 3 (default "30,300"). */
  EMAIL_RETRY_DELAYS_SECONDS?: string;
  MAIL_API_URL?: string;
  /** Worker secret. */
  MAIL_API_KEY?: string;
  MAIL_FROM?: string;
};
