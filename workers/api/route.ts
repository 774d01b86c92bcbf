import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { Role } from "../../db/schema/users.ts";
import { ErrorBodySchema } from "../../shared/schemas/common.ts";
import type { AppEnv } from "./context.ts";
import { authenticate, requireRole, type AuthMode } from "./middleware/auth.ts";

const SECURITY: Record<AuthMode, RouteConfig["security"]> = {
  NONE: [],
  KEY: [{ ApiKey: [] }],
  JWT: [{ DashboardSession: [] }],
  KEY_OR_JWT: [{ ApiKey: [] }, { DashboardSession: [] }],
};

const AUTH_TEXT: Record<AuthMode, string> = {
  NONE: "none (rate limited per client IP)",
  KEY: "API key (`x-api-key`)",
  JWT: "dashboard session (`Authorization: Bearer`)",
  KEY_OR_JWT: "API key (`x-api-key`) or dashboard session (`Authorization: Bearer`)",
};

const ERROR_TEXT: Record<number, string> = {
  400: "Validation failure (message: one string per bad field) or malformed JSON",
  401: "Missing, invalid or revoked credentials, or an expired session",
  403: "Authenticated but not permitted (role)",
  404: "Not found for this tenant",
  409: "Conflict with the resource's current state",
  429: "Rate limited; see Retry-After",
  500: "Service fault",
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
  /** Extra documented error statuses (404 and 400 are added when the route has params or input). */
  errors?: number[];
};

/**
 * Declares a route once: its schemas, its auth (enforced by middleware and
 * documented as OpenAPI security), and the error responses it can give.
 */
export function defineRoute<const R extends RouteConfig>(spec: RouteSpec, route: R): R & { getRoutingPath(): string } {
  const middleware: MiddlewareHandler<AppEnv>[] = [authenticate(spec.auth, { rateLimit: spec.rateLimit })];
  if (spec.roles) middleware.push(requireRole(spec.roles, { allowApiKey: spec.rolesAllowApiKey }));
  const statuses = new Set<number>([429, 500, ...(spec.errors ?? [])]);
  if (route.request) statuses.add(400);
  if (spec.auth !== "NONE") statuses.add(401);
  if (spec.roles) statuses.add(403);
  if (route.request?.params) statuses.add(404);
  if (spec.rateLimit === false) statuses.delete(429);
  const roleText = spec.roles ? `; roles ${spec.roles.join("/")}${spec.rolesAllowApiKey ? " (API keys allowed)" : ""}` : "";
  const responses = { ...route.responses } as RouteConfig["responses"];
  for (const s of [...statuses].sort()) responses[s] ??= errorResponse(s);
  return createRoute({
    ...route,
    security: SECURITY[spec.auth],
    description: `${route.description ?? ""}\n\n**Auth:** ${AUTH_TEXT[spec.auth]}${roleText}.`.trim(),
    middleware: [...middleware, ...((route.middleware as MiddlewareHandler[] | undefined) ?? [])] as never,
    responses,
  }) as R & { getRoutingPath(): string };
}
