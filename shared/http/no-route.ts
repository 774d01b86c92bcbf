import type { Context, Hono } from "hono";
import { errorBodyForStatus } from "../domain/errors.ts";

// biome-ignore lint/suspicious/noExplicitAny: any app's routes, whatever its env.
type AnyApp = Hono<any, any, any>;

const patternCache = new WeakMap<object, { re: RegExp; method: string }[]>();

/**
 * The methods registered for a concrete path, to tell 405 from 404. Paths match exactly: `/v1/loans/` is
 * no route (404), rather than a 405 whose Allow would name the very method that was sent.
 */
export function methodsForPath(app: AnyApp, path: string): string[] {
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

/**
 * Both workers' answer when no route matched: 405 with `Allow` when the path
 * has routes of other methods, else 404, each with the spec's error body.
 */
export const noRoute = (app: AnyApp) => (c: Context) => {
  const allowed = methodsForPath(app, c.req.path);
  if (allowed.length > 0) {
    return c.json(errorBodyForStatus(405, `Method ${c.req.method} is not allowed on ${c.req.path}`), 405, { Allow: allowed.join(", ") });
  }
  return c.json(errorBodyForStatus(404, `No route for ${c.req.method} ${c.req.path}`), 404);
};
