import { OpenAPIHono } from "@hono/zod-openapi";
import { errorBodyForStatus } from "../../shared/domain/errors.ts";
import { limitBodySize } from "../../shared/http/body-limit.ts";
import { handleError, validationHook } from "../../shared/http/errors.ts";
import { requestIdHeader } from "../../shared/http/request-id.ts";
import type { EmbedAppEnv, EmbedDeps, EmbedEnv } from "./env.ts";
import { embedFailureGate, pageLimit } from "./middleware/embed-limits.ts";
import { programAccess } from "./middleware/program-access.ts";
import { embedDocument } from "./openapi-document.ts";
import { ROUTES } from "./routes.ts";

/**
 * The embed worker's app: widget endpoints under `/v1/embed/:embedKey/…` and
 * the hosted pages. Every response names the worker (`x-svc-worker: embed`),
 * since `/v1/embed/*` shares the api's host.
 */
export function createEmbedApp(makeDeps: (env: EmbedEnv) => EmbedDeps) {
  const app = new OpenAPIHono<EmbedAppEnv>({ defaultHook: validationHook });
  app.use("*", ...requestIdHeader("embed"));
  app.use("*", async (c, next) => {
    c.set("deps", makeDeps(c.env));
    return next();
  });
  // The same cap as the api worker's, before the key is looked up: an oversized body is never parsed (413).
  app.use("*", limitBodySize());
  app.use("/v1/embed/*", embedFailureGate);
  app.use("/embed/*", embedFailureGate);
  app.use("/v1/embed/:embedKey/*", programAccess);
  // Also matches `/embed/:embedKey` itself (the widget page).
  app.use("/embed/:embedKey/*", pageLimit);
  for (const register of ROUTES) register(app);
  app.get("/openapi.json", (c) => c.json(embedDocument(app, c)));
  app.notFound((c) => c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}
