import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { Role } from "../../db/schema/users.ts";
import type { TenantMode } from "../../shared/domain/rails.ts";
import { ErrorBodySchema } from "../../shared/schemas/common.ts";
import type { AppEnv } from "./context.ts";
import { authenticate, requireMode, requireRole, type AuthMode } from "./middleware/auth.ts";

const SECURITY: Record<AuthMode, RouteConfig["security"]> = {
  NONE: [],
  KEY: [{ ApiKey: [] }],
  JWT: [{ DashboardSession: [] }],
  KEY_OR_JWT: [{ ApiKey: [] }, { DashboardSession: [] }],
  OPERATOR: [{ OperatorKey: [] }],
};

const AUTH_TEXT: Record<AuthMode, string> = {
  NONE: "none (rate limited per client IP)",
  KEY: "API key (`x-api-key`)",
  JWT: "dashboard session (`Authorization: Bearer`)",
  KEY_OR_JWT: "API key (`x-api-key`) or dashboard session (`Authorization: Bearer`)",
  OPERATOR: "platform operator key (`x-operator-key`; merchant credentials are refused; rate limited per client IP)",
};

const ERROR_TEXT: Record<number, string> = {
  400: "Validation failure (message: one string per bad field) or malformed JSON",
  401: "Missing, invalid or revoked credentials, or an expired session",
  403: "Authenticated but not permitted (role; or `mode` naming the other mode's data, for a key of one mode)",
  404: "Not found for this tenant",
  409: "Conflict with the resource's current state",
  413: "Body over 64 KiB",
  415: "A body that is not `application/json`",
  429: "Rate limited; see Retry-After",
  500: "Service fault",
  503: "This deployment lacks a setting the operation needs (the message names it, never its value)",
};

const errorResponse = (status: number) => ({
  description: ERROR_TEXT[status] ?? "Error",
  content: { "application/json": { schema: ErrorBodySchema } },
});

export type RouteSpec = {
  auth: AuthMode;
  /** Dashboard roles allowed; omitted: any authenticated caller. */
  roles?: readonly Role[];
  /** With `roles`: whether an API key may also call (KEY_OR_JWT routes such as webhooks). */
  rolesAllowApiKey?: boolean;
  rateLimit?: boolean;
  /**
   * Only keys of this mode may call (DECISIONS.md "Modes"): the sandbox
   * helpers are `"sandbox"`, so a live key gets 403 (a certified tenant's
   * sandbox key keeps them). Checked after authentication.
   */
  mode?: TenantMode;
  /** Extra documented error statuses (404 and 400 are added when the route has params or input). */
  errors?: number[];
};

/** A route made by `defineRoute`: the route config, and the spec it was declared with. */
export type DefinedRoute<R extends RouteConfig = RouteConfig> = R & { getRoutingPath(): string; readonly spec: RouteSpec };

/**
 * Declares a route once: its schemas, its auth (enforced by middleware and
 * documented as OpenAPI security), and the error responses it can give. The
 * returned route carries its `spec`, so the route table can be checked as data
 * (workers/api/security.test.ts). Its `operationId` (`<resource>.<verb>`) is
 * required and written out, not derived from the path: generated clients name
 * their methods after it, so it must not change when a path does.
 */
export function defineRoute<const R extends RouteConfig & { operationId: string }>(spec: RouteSpec, route: R): DefinedRoute<R> {
  const middleware: MiddlewareHandler<AppEnv>[] = [authenticate(spec.auth, { rateLimit: spec.rateLimit })];
  if (spec.roles) middleware.push(requireRole(spec.roles, { allowApiKey: spec.rolesAllowApiKey }));
  if (spec.mode) middleware.push(requireMode(spec.mode));
  const statuses = new Set<number>([429, 500, ...(spec.errors ?? [])]);
  if (route.request) statuses.add(400);
  // Every worker caps bodies at 64 KiB (shared/http/body-limit.ts); a JSON body route refuses any other media type.
  if (route.request?.body) for (const s of [413, 415]) statuses.add(s);
  if (spec.auth !== "NONE") statuses.add(401);
  // A `mode` filter: a sandbox key asking for live data (or a live key for sandbox) gets 403 (DECISIONS.md "Modes").
  const query = route.request?.query as { shape?: Record<string, unknown> } | undefined;
  if (spec.roles || spec.mode || query?.shape?.mode) statuses.add(403);
  if (route.request?.params) statuses.add(404);
  if (spec.rateLimit === false) statuses.delete(429);
  const roleText =
    (spec.roles ? `; roles ${spec.roles.join("/")}${spec.rolesAllowApiKey ? " (API keys allowed)" : ""}` : "") +
    // A request acts in its key's mode (DECISIONS.md "Modes"): a certified tenant keeps its sandbox, through its sandbox keys.
    (spec.mode ? `; ${spec.mode} API keys only (${spec.mode === "sandbox" ? "svc_test_…; a live key" : "svc_live_…; a sandbox key"} gets 403)` : "");
  const responses = { ...route.responses } as RouteConfig["responses"];
  for (const s of [...statuses].sort()) responses[s] ??= errorResponse(s);
  const created = createRoute({
    ...route,
    security: SECURITY[spec.auth],
    description: `${route.description ?? ""}\n\n**Auth:** ${AUTH_TEXT[spec.auth]}${roleText}.`.trim(),
    middleware: [...middleware, ...((route.middleware as MiddlewareHandler[] | undefined) ?? [])] as never,
    responses,
  });
  // Not enumerable: the OpenAPI generator copies a route's enumerable keys into the operation.
  Object.defineProperty(created, "spec", { value: Object.freeze({ ...spec }), enumerable: false });
  return created as unknown as DefinedRoute<R>;
}
