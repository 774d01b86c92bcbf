import { ConfigurationError } from "../config/required-secrets.ts";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { DomainError, errorBodyForStatus, toErrorBody, validationError } from "../domain/errors.ts";
import { isTransientError } from "./transient-errors.ts";
import "./zod-messages.ts";
import { consoleLogger, safeErrorFields, type Logger } from "../observability/logger.ts";

/**
 * The single place where errors become SPEC.md's `{ statusCode, message, error }`,
 * for every worker's Hono app (`app.onError(handleError)`). Unexpected
 * exceptions answer 500 with a generic message; the log line carries the
 * request id and the error, never request data.
 */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof DomainError) {
    return c.json(toErrorBody(err), err.status as ContentfulStatusCode, err.headers);
  }
  if (err instanceof HTTPException) {
    // Hono's own 4xx: malformed JSON, body too large and the like.
    const status = err.status;
    const message = status === 400 && /JSON/i.test(err.message) ? "Malformed JSON in request body" : err.message || "Bad request";
    return c.json(errorBodyForStatus(status, message), status as ContentfulStatusCode);
  }
  const log: Logger = (c.get("deps") as { log?: Logger } | undefined)?.log ?? consoleLogger;
  if (isTransientError(err)) {
    // The platform failed us (D1, a Durable Object): the request may be retried as it is.
    log.error("transient error", { requestId: c.get("requestId"), ...safeErrorFields(err) });
    return c.json(errorBodyForStatus(503, "Temporarily unavailable; retry (with the same idempotency key, if any)"), 503, { "Retry-After": "1" });
  }
  if (err instanceof ConfigurationError) {
    // A deployment without a setting it needs: say which (never a value), not 500 for everything.
    log.error("worker not configured", { requestId: c.get("requestId"), message: err.message });
    return c.json(errorBodyForStatus(503, err.message), 503);
  }
  log.error("unhandled error", { requestId: c.get("requestId"), ...safeErrorFields(err) });
  return c.json(errorBodyForStatus(500, "Internal server error"), 500);
}

/** One string per bad field, each naming it: `tenures.0: Invalid option: expected one of 3|7|15`. */
export function fieldMessages(error: ZodError, target?: string): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    const field = path || (target === "json" ? "body" : (target ?? "input"));
    // A missing field's message says so (zod-messages.ts).
    return `${field}: ${issue.message}`;
  });
}

/** zod-openapi's hook: a failed validation throws our validation error. */
export const validationHook = (result: { success: boolean; error?: ZodError; target?: string }) => {
  if (!result.success && result.error) throw validationError(fieldMessages(result.error, result.target));
};
