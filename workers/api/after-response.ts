import type { Context } from "hono";
import { safeErrorFields } from "../../shared/observability/logger.ts";
import type { AppEnv } from "./context.ts";

/**
 * Runs `task` after the response where the worker has an execution context
 * (`waitUntil`), before it returns where there is none (the Bun tier:
 * `executionCtx` throws). For work whose outcome the answer must not show,
 * not even by its timing. A failure is logged as `failure`, never the
 * request's error.
 */
export async function afterResponse(c: Context<AppEnv>, task: () => Promise<unknown>, failure: string): Promise<void> {
  const { log } = c.get("deps");
  const run = task().catch((err) => log.error(failure, safeErrorFields(err)));
  let ctx: { waitUntil(promise: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined;
  }
  if (ctx) ctx.waitUntil(run);
  else await run;
}
