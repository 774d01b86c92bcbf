import { Hono } from "hono";
import { errorBodyForStatus } from "../domain/errors.ts";
import { handleError } from "./errors.ts";
import { requestIdHeader } from "./request-id.ts";

/**
 * The HTTP face of a worker that serves no API (cron, webhooks): `GET /health`
 * and the spec's error body for everything else.
 */
export function createHealthApp(service: string) {
  const app = new Hono();
  app.use("*", ...requestIdHeader(service));
  app.get("/health", (c) => c.json({ status: "ok", service }));
  app.notFound((c) => c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}
