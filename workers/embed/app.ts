import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DomainError, errorBodyForStatus, toErrorBody } from "../../shared/domain/errors.ts";
import type { EmbedAppEnv } from "./env.ts";
import { ROUTES } from "./routes.ts";

/**
 * Names the worker that answered. `/v1/embed/*` shares the api's host, so this
 * is how a caller (and the local stack's tests) tells the two apart.
 */
export const WORKER_HEADER = "x-svc-worker";

/** The embed worker's Hono app: widget endpoints and hosted pages. */
export function createEmbedApp() {
  const app = new Hono<EmbedAppEnv>();

  app.use("*", requestId({ headerName: "x-request-id" }));
  app.use("*", async (c, next) => {
    try {
      await next();
    } finally {
      c.res.headers.set("x-request-id", c.get("requestId"));
      c.res.headers.set(WORKER_HEADER, "embed");
    }
  });

  for (const register of ROUTES) register(app);

  app.notFound((c) => c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404));
  app.onError((err, c) => {
    if (err instanceof DomainError) {
      return c.json(toErrorBody(err), err.status as ContentfulStatusCode, err.headers);
    }
    if (err instanceof HTTPException) {
      return c.json(errorBodyForStatus(err.status, err.message || "Bad request"), err.status as ContentfulStatusCode);
    }
    console.error(JSON.stringify({ level: "error", msg: "unhandled error", requestId: c.get("requestId"), name: err.name }));
    return c.json(errorBodyForStatus(500, "Internal server error"), 500);
  });
  return app;
}
