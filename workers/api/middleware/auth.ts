import type { MiddlewareHandler } from "hono";
import type { Role } from "../../../db/schema/users.ts";
import { OPERATOR_KEY_HEADER, operatorKeyMatches } from "../../../shared/auth/operator-key.ts";
import { principalForApiKey, principalForSession } from "../../../shared/auth/resolve-principal.ts";
import { forbidden, rateLimited, unauthorized } from "../../../shared/domain/errors.ts";
import type { TenantMode } from "../../../shared/domain/rails.ts";
import type { AppEnv } from "../context.ts";

/** Which credentials a route accepts (SPEC.md "Authentication"). */
export type AuthMode = "NONE" | "KEY" | "JWT" | "KEY_OR_JWT" | "OPERATOR";

const bearer = (header: string | undefined): string | null => {
  const m = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return m ? m[1]! : null;
};

/** The client address Cloudflare (and miniflare) put on the request. */
export const clientIp = (headers: { header(name: string): string | undefined }): string => headers.header("cf-connecting-ip") ?? "unknown";

/**
 * Resolves the principal for a route, then applies the rate limits: per API
 * key or per dashboard user, and per tenant over all its keys and users,
 * when authenticated; per client IP otherwise.
 *
 * Credentials that resolve to nobody (an unknown or revoked key, a bad or
 * expired session) spend the client IP's failure budget: the request that
 * exhausts it gets 429 instead of 401, and until the window ends every
 * request from that IP that carries credentials gets 429 before any lookup.
 * Requests without credentials spend nothing: they look nothing up.
 *
 * The lookup is one D1 round trip (one JOINed select), made once per request.
 */
export function authenticate(mode: AuthMode, options: { rateLimit?: boolean } = {}): MiddlewareHandler<AppEnv> {
  const limited = options.rateLimit ?? true;
  return async (c, next) => {
    const { db, jwtSecret, limiters, authFailures } = c.get("deps");
    const ip = clientIp(c.req);
    if (mode === "NONE") {
      if (limited && !(await limiters.ip.limit({ key: `ip:${ip}` })).success) {
        throw rateLimited(limiters.periodSeconds);
      }
      return next();
    }
    if (mode === "OPERATOR") return authenticateOperator(c, next);
    const key = c.req.header("x-api-key");
    const token = bearer(c.req.header("authorization"));
    const useKey = key !== undefined && (mode === "KEY" || mode === "KEY_OR_JWT");
    const useToken = !useKey && token !== null && (mode === "JWT" || mode === "KEY_OR_JWT");
    if (!useKey && !useToken) {
      if (mode === "JWT") throw unauthorized("This route requires a dashboard session: Authorization: Bearer <token> from POST /v1/auth/login");
      if (mode === "KEY") throw unauthorized("Missing x-api-key header");
      throw unauthorized("Missing credentials: send x-api-key or Authorization: Bearer <token>");
    }
    const wait = authFailures.blockedFor(ip);
    if (wait > 0) throw rateLimited(wait);
    const principal = useKey ? await principalForApiKey(db, key!) : await principalForSession(db, token!, jwtSecret);
    if (!principal) {
      if (!(await authFailures.spend(ip))) throw rateLimited(authFailures.periodSeconds);
      throw unauthorized(useKey ? "Invalid or revoked API key" : "Invalid or expired session token");
    }
    if (limited) {
      const rateKey = principal.kind === "apiKey" ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
      if (!(await limiters.apiKey.limit({ key: rateKey })).success) throw rateLimited(limiters.periodSeconds);
      // Per tenant too, so that more keys (or users) never mean more traffic.
      if (!(await limiters.tenant.limit({ key: `tenant:${principal.tenant.id}` })).success) throw rateLimited(limiters.periodSeconds);
    }
    c.set("principal", principal);
    return next();
  };
}

/**
 * The platform operator (/v1/operator/*): `x-operator-key` against the worker
 * secret, hashed and compared in constant time. Merchant credentials mean
 * nothing here (401). Rate limited per client IP, and a wrong key spends the
 * IP's failed-authentication budget like any bad credential. No principal is
 * set: the operator acts on the tenant its path names.
 */
async function authenticateOperator(c: Parameters<MiddlewareHandler<AppEnv>>[0], next: () => Promise<void>) {
  const { limiters, authFailures, operatorKey } = c.get("deps");
  const ip = clientIp(c.req);
  if (!(await limiters.ip.limit({ key: `operator:${ip}` })).success) throw rateLimited(limiters.periodSeconds);
  const presented = c.req.header(OPERATOR_KEY_HEADER);
  if (presented === undefined) throw unauthorized(`This route requires the platform operator key (${OPERATOR_KEY_HEADER})`);
  const wait = authFailures.blockedFor(ip);
  if (wait > 0) throw rateLimited(wait);
  if (!(await operatorKeyMatches(operatorKey, presented))) {
    if (!(await authFailures.spend(ip))) throw rateLimited(authFailures.periodSeconds);
    throw unauthorized("Invalid operator key");
  }
  return next();
}

/**
 * Restricts a route to dashboard roles. API keys act for the merchant's
 * backend and pass only where the route also accepts them (`allowApiKey`).
 */
export function requireRole(roles: readonly Role[], options: { allowApiKey?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const p = c.get("principal");
    if (p.kind === "apiKey") {
      if (!options.allowApiKey) throw forbidden("This route requires a dashboard user");
    } else if (!roles.includes(p.role)) {
      throw forbidden(`This route requires the role ${roles.join(" or ")}; you are ${p.role}`);
    }
    return next();
  };
}

/**
 * Restricts a route to one mode (DECISIONS.md "Modes"), before the body is
 * even read: a request acts in its API key's mode, so a live key
 * (`svc_live_…`) on a sandbox helper gets 403, whatever the tenant. A
 * dashboard session sees both modes and acts here in the route's. A
 * certified tenant's sandbox key keeps the sandbox: its clock, pools and
 * ledgers never touch a live loan.
 */
export function requireMode(mode: TenantMode): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.get("principal");
    if (principal.kind === "apiKey" && principal.mode !== mode) {
      throw forbidden(
        mode === "sandbox"
          ? "Sandbox helpers are for sandbox API keys (svc_test_…) only; this is a live key"
          : `This route is for ${mode} API keys only; this is a ${principal.mode} key`,
      );
    }
    return next();
  };
}
