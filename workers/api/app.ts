import { OpenAPIHono } from "@hono/zod-openapi";
import { errorBodyForStatus } from "../../shared/domain/errors.ts";
import { limitBodySize } from "../../shared/http/body-limit.ts";
import type { AppEnv } from "./context.ts";
import type { ApiDeps, ApiEnv } from "./deps.ts";
import { handleError, validationHook } from "../../shared/http/errors.ts";
import { requestIdHeader } from "../../shared/http/request-id.ts";
import { ROUTES } from "./routes.ts";
import { relayAfterWrite } from "./middleware/relay.ts";
import { registerDocs } from "./docs/docs-page.ts";

export { MAX_BODY_BYTES } from "../../shared/http/body-limit.ts";

/**
 * The api worker's Hono app. `makeDeps` turns the worker's bindings into the
 * verbs' dependencies (D1 in workers; libSQL and fakes in tests).
 */
export function createApiApp(makeDeps: (env: ApiEnv) => ApiDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use("*", ...requestIdHeader());
  app.use("*", async (c, next) => {
    c.set("deps", makeDeps(c.env));
    return next();
  });
  app.use("*", limitBodySize());

  app.use("*", relayAfterWrite);
  for (const { register } of ROUTES) register(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "Merchant backend key, created with POST /v1/api-keys; shown once, stored hashed.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "DashboardSession", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Dashboard session from POST /v1/auth/login or /v1/auth/signup; expires (default 1 hour).",
  });
  app.doc31("/v1/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "svc credit API",
      version: "v1",
      description: [
        "Embedded, non-custodial stablecoin credit for merchants.",
        "",
        "Errors always have the body `{ statusCode, message, error }`; for validation failures `message` is an array with one string per bad field, each starting with the field's path.",
        "Every response carries `x-request-id`. Amounts are decimal strings; internally integer 10^-6 units.",
        "Lists return `{ data, nextCursor }`, newest first, `limit` 1..100 (default 20).",
        "Rate limits: per API key (or dashboard user), per tenant over all its keys and users, per client IP on unauthenticated routes, signups per client IP, logins per account, and failed authentications per client IP (past that budget the IP's credentialed requests get 429 before any lookup); a 429 carries `Retry-After` in seconds. Bodies over 64 KiB: 413.",
        "The public widget calls (`/v1/embed/:embedKey/…`) are documented in the embed worker's document: `{embed_url}/openapi.json`.",
      ].join("\n"),
    },
    servers: [{ url: "/" }],
  });
  registerDocs(app);

  app.notFound((c) => {
    const allowed = methodsForPath(app, c.req.path);
    if (allowed.length > 0) {
      return c.json(errorBodyForStatus(405, `Method ${c.req.method} is not allowed on ${c.req.path}`), 405, {
        Allow: allowed.join(", "),
      });
    }
    return c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404);
  });
  app.onError(handleError);
  return app;
}

const patternCache = new WeakMap<object, { re: RegExp; method: string }[]>();

/** The methods registered for a concrete path, to tell 405 from 404. */
function methodsForPath(app: OpenAPIHono<AppEnv>, path: string): string[] {
  let patterns = patternCache.get(app);
  if (!patterns) {
    patterns = app.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => ({
        method: r.method,
        re: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`),
      }));
    patternCache.set(app, patterns);
  }
  return [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
}
