import { OpenAPIHono } from "@hono/zod-openapi";
import { noRoute } from "../../shared/http/no-route.ts";
import { limitBodySize, requireIdentityEncoding, requireUtf8Json } from "../../shared/http/body-limit.ts";
import { registerWebhookPayloads } from "./webhook-payloads.ts";
import { requireDecodablePath } from "../../shared/http/path-encoding.ts";
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
  app.use("*", requireDecodablePath());
  app.use("*", limitBodySize());
  app.use("*", requireIdentityEncoding());
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
  registerWebhookPayloads(app);
  app.doc31("/v1/openapi.json", apiDocumentConfig);
  registerDocs(app);
  registerDashboard(app);

  app.notFound(noRoute(app));
  app.onError(handleError);
  return app;
}
