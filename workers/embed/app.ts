import { OpenAPIHono } from "@hono/zod-openapi";
import { noRoute } from "../../shared/http/no-route.ts";
import { limitBodySize, requireIdentityEncoding, requireUtf8Json } from "../../shared/http/body-limit.ts";
import { requireDecodablePath } from "../../shared/http/path-encoding.ts";
import { handleError, validationHook } from "../../shared/http/errors.ts";
import { requestIdHeader } from "../../shared/http/request-id.ts";
import type { EmbedAppEnv, EmbedDeps, EmbedEnv } from "./env.ts";
import { embedFailureGate, pageLimit } from "./middleware/embed-limits.ts";
import { programAccess } from "./middleware/program-access.ts";
import { embedDocument } from "./openapi-document.ts";
import { ROUTES } from "./routes.ts";

/** Where the embed document is on `{base_url}`, besides `{embed_url}/openapi.json`. */
export const EMBED_DOCUMENT_ON_API_HOST = "/v1/embed/openapi.json";

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
  app.use("*", requireDecodablePath());
  app.use("*", limitBodySize());
  app.use("*", requireIdentityEncoding());
  app.use("*", requireUtf8Json());
  app.use("/v1/embed/*", embedFailureGate);
  app.use("/embed/*", embedFailureGate);
  // The embed document on the api host too: `{base_url}/v1/embed/openapi.json` reaches this worker (the
  // `/v1/embed/*` route), so the api's /docs page loads both documents from its own origin. Registered before
  // the embed-key middleware, which would take `openapi.json` for an embed key; answers what `/openapi.json` does.
  app.get(EMBED_DOCUMENT_ON_API_HOST, (c) => app.fetch(new Request(new URL("/openapi.json", c.req.url).href), c.env));
  app.use("/v1/embed/:embedKey/*", programAccess);
  // Also matches `/embed/:embedKey` itself (the widget page).
  app.use("/embed/:embedKey/*", pageLimit);
  for (const register of ROUTES) register(app);
  app.get("/openapi.json", (c) => c.json(embedDocument(app, c)));
  app.notFound(noRoute(app));
  app.onError(handleError);
  return app;
}
