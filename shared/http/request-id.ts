import type { MiddlewareHandler } from "hono";
import { requestId } from "hono/request-id";

/** The header that names the worker that answered (`/v1/embed/*` shares the api's host). */
export const WORKER_HEADER = "x-svc-worker";

/**
 * `x-request-id` on every response, errors included: a caller's well-formed
 * id is kept, otherwise a UUID is made. With `worker`, also `x-svc-worker`.
 */
export function requestIdHeader(worker?: string): MiddlewareHandler[] {
  return [
    requestId({ headerName: "x-request-id" }),
    async (c, next) => {
      try {
        await next();
      } finally {
        c.res.headers.set("x-request-id", c.get("requestId"));
        if (worker) c.res.headers.set(WORKER_HEADER, worker);
      }
    },
  ];
}
