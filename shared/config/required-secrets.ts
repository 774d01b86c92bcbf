import { errorBodyForStatus } from "../domain/errors.ts";
import { consoleLogger, type Logger } from "../observability/logger.ts";

/**
 * A worker that cannot run as configured: a required secret is missing, or a
 * var or secret is malformed. Its message names the settings (never their
 * values), for the operator reading the logs or the 503.
 */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/**
 * The worker secrets of `required` (its wrangler config's `[secrets]
 * required`) that `env` lacks. Under `ENVIRONMENT=development` (npm run dev,
 * the tests) none is required: each has a development default.
 */
export function missingSecrets(env: object, required: readonly string[]): string[] {
  const values = env as Record<string, unknown>;
  if (values.ENVIRONMENT === "development") return [];
  return required.filter((name) => typeof values[name] !== "string" || values[name] === "");
}

/** The error (and 503 message) for missing secrets: which, and how to set them. */
export const missingSecretsError = (missing: readonly string[]) =>
  new ConfigurationError(
    `This worker is not configured: missing secret${missing.length > 1 ? "s" : ""} ${missing.join(", ")} (wrangler secret put <NAME>, then deploy again)`,
  );

/**
 * The worker's handlers behind a check of its required secrets, made on
 * every invocation (a lookup of a few env properties) and logged once per
 * isolate. A worker that lacks one says which instead of failing on
 * whatever first needs it: `fetch` answers 503 with the names, `queue`
 * and `scheduled` throw (the batch is retried, and after its retries goes
 * to the dead-letter queue; the cron run shows as failed), so nothing is
 * consumed half-configured.
 *
 * @example export default withRequiredSecrets(REQUIRED_SECRETS, { fetch, queue })
 */
export function withRequiredSecrets<Env extends object, Message = unknown>(
  required: readonly string[],
  handler: ExportedHandler<Env, Message>,
  log: Logger = consoleLogger,
): ExportedHandler<Env, Message> {
  const reported = new WeakSet<object>();
  const check = (env: Env): ConfigurationError | null => {
    const missing = missingSecrets(env, required);
    if (missing.length === 0) return null;
    const error = missingSecretsError(missing);
    if (!reported.has(env)) {
      reported.add(env);
      log.error("worker not configured", { missing });
    }
    return error;
  };
  const out: ExportedHandler<Env, Message> = {};
  const { fetch, queue, scheduled } = handler;
  if (fetch) {
    out.fetch = (request, env, ctx) => {
      const error = check(env);
      if (!error) return fetch(request, env, ctx);
      return Response.json(errorBodyForStatus(503, error.message), { status: 503 });
    };
  }
  if (queue) {
    out.queue = (batch, env, ctx) => {
      const error = check(env);
      if (error) throw error;
      return queue(batch, env, ctx);
    };
  }
  if (scheduled) {
    out.scheduled = (controller, env, ctx) => {
      const error = check(env);
      if (error) throw error;
      return scheduled(controller, env, ctx);
    };
  }
  return out;
}
