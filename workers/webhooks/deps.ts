import { z } from "zod";
import { oncePerEnv } from "../../shared/config/once-per-env.ts";
import { tenantDatabase } from "../../db/databases.ts";
import { createDb } from "../../db/create-db.ts";
import { DEV_SECRETS_KEY } from "../../shared/crypto/secret-box.ts";
import { systemClock } from "../../shared/domain/clock.ts";
import { mailProviderFromEnv, type MailProvider } from "../../shared/notifications/mail-provider.ts";
import { consoleLogger } from "../../shared/observability/logger.ts";
import type { DeliveryDeps } from "../../shared/webhooks/deliver.ts";
import type { DeliveryQueue } from "../../shared/webhooks/messages.ts";
import type { WebhooksEnv } from "./env.ts";

const seconds = z
  .string()
  .regex(/^\d+(,\d+)*$/)
  .transform((s) => s.split(",").map(Number));

const EnvSchema = z.object({
  ENVIRONMENT: z.enum(["development", "production"]).default("production"),
  SECRETS_KEY: z.string().min(32).optional(),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(10_000),
  WEBHOOK_RETRY_DELAYS_SECONDS: seconds.default([30, 120]),
  EMAIL_RETRY_DELAYS_SECONDS: seconds.default([30, 300]),
  MAIL_API_URL: z.url().optional(),
  MAIL_API_KEY: z.string().min(1).optional(),
  MAIL_FROM: z.string().min(3).optional(),
});

/** The Queue binding as the verbs' producer port. */
export const queuePort = (queue: Queue<import("../../shared/webhooks/messages.ts").DeliveryMessage>): DeliveryQueue => ({
  send: async (body, options) => void (await queue.send(body, options)),
  sendBatch: async (messages) => void (await queue.sendBatch(messages)),
});

export function webhookDepsFromEnv(env: WebhooksEnv): DeliveryDeps & { mail: MailProvider; emailRetrySeconds: number[] } {
  const parsed = EnvSchema.parse(env);
  const secretsKey = parsed.SECRETS_KEY ?? (parsed.ENVIRONMENT === "development" ? DEV_SECRETS_KEY : undefined);
  if (!secretsKey) throw new Error("SECRETS_KEY is not configured");
  // Deliveries are a tenant's rows; with shards, a delivery message names its tenant's database.
  const db = createDb(tenantDatabase(env));
  const mail = mailProviderFromEnv(parsed, db, (url, init) => fetch(url, init));
  return {
    db,
    queue: queuePort(env.WEBHOOK_DELIVERIES),
    clock: systemClock,
    fetch: (url, init) => fetch(url, init),
    secretsKey,
    timeoutMs: parsed.WEBHOOK_TIMEOUT_MS,
    retryDelaysSeconds: parsed.WEBHOOK_RETRY_DELAYS_SECONDS,
    log: consoleLogger,
    mail,
    emailRetrySeconds: parsed.EMAIL_RETRY_DELAYS_SECONDS,
  };
}

/** `webhookDepsFromEnv` once per env object (an isolate's bindings), not once per batch: shared/config/once-per-env.ts. */
export const webhookDepsOfIsolate: (env: WebhooksEnv) => ReturnType<typeof webhookDepsFromEnv> = oncePerEnv(webhookDepsFromEnv);
