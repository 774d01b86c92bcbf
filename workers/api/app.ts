import { OpenAPIHono } from "@hono/zod-openapi";
import { errorBodyForStatus } from "../../shared/domain/errors.ts";
import { limitBodySize, requireUtf8Json } from "../../shared/http/body-limit.ts";
import type { AppEnv } from "./context.ts";
import type { ApiDeps, ApiEnv } from "./deps.ts";
import { handleError, validationHook } from "../../shared/http/errors.ts";
import { requestIdHeader } from "../../shared/http/request-id.ts";
import { ROUTES } from "./routes.ts";
import { relayAfterWrite } from "./middleware/relay.ts";
import { apiDocumentConfig } from "./openapi-document.ts";
import { registerDashboard } from "./dashboard/dashboard-page.ts";
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
  app.use("*", requireUtf8Json());

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
  app.openAPIRegistry.registerComponent("securitySchemes", "OperatorKey", {
    type: "apiKey",
    in: "header",
    name: "x-operator-key",
    description: "The platform operator's key (worker secret OPERATOR_KEY); for /v1/operator/* only, never a merchant's.",
  });
  app.doc31("/v1/openapi.json", apiDocumentConfig);
  registerDocs(app);
  registerDashboard(app);

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

/**
 * The methods registered for a concrete path, to tell 405 from 404. Paths match exactly: `/v1/loans/` is
 * no route (404), rather than a 405 whose Allow would name the very method that was sent.
 */
function methodsForPath(app: OpenAPIHono<AppEnv>, path: string): string[] {
  let patterns = patternCache.get(app);
  if (!patterns) {
    patterns = app.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .map((r) => ({
        method: r.method,
        re: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}$`),
      }));
    patternCache.set(app, patterns);
  }
  return [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
}
