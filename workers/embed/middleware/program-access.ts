import type { MiddlewareHandler } from "hono";
import { DomainError, forbidden, rateLimited } from "../../../shared/domain/errors.ts";
import { programContext } from "../../../shared/embed/program-context.ts";
import { BOOKMARK_HEADER } from "../../../db/read-session.ts";
import type { EmbedAppEnv, EmbedDeps } from "../env.ts";

// x-svc-wallet-session: the widget's wallet session (eligibility, bootstrap, quote).
// x-d1-bookmark: read consistency of a loan poll (db/read-session.ts), sent back and exposed.
const ALLOW_HEADERS = `content-type, x-svc-wallet-session, ${BOOKMARK_HEADER}`;
const ALLOW_METHODS = "GET, POST, OPTIONS";

/**
 * Every `/v1/embed/:embedKey/…` call: the key names a live program (else
 * 404); a browser `Origin` must be one of the program's allowed origins
 * exactly, or the widget's own origin (its iframe and hosted pages call
 * from there), else 403 and no CORS grant; calls without an Origin, from a
 * server, pass; calls are limited per embed key and client IP (429), before
 * anything is read, so refused origins and unknown keys spend it too. The
 * grant is the exact origin, never `*`, and never with credentials.
 */
/**
 * The program of an embed key. A GET only reads: from the nearest replica,
 * where a change to the program shows within the replication delay; one the
 * replica does not know yet (just created) is read again from the primary,
 * so a new program never answers 404. Anything that writes reads the primary.
 */
async function programOf(deps: EmbedDeps, embedKey: string, readOnly: boolean) {
  const replica = readOnly ? deps.readSessions?.("first-unconstrained") : undefined;
  if (!replica) return programContext(deps.db, embedKey);
  try {
    return await programContext(replica.db, embedKey);
  } catch (err) {
    if (err instanceof DomainError && err.kind === "NOT_FOUND") return programContext(deps.db, embedKey);
    throw err;
  }
}

export const programAccess: MiddlewareHandler<EmbedAppEnv> = async (c, next) => {
  const deps = c.get("deps");
  const embedKey = c.req.param("embedKey") ?? "";
  // Limited first, before the program's reads: a refused origin spent nothing before (an audit read the program
  // four statements at a time, unlimited, with a foreign Origin).
  const ip = c.req.header("cf-connecting-ip") ?? "unknown";
  if (!(await deps.limiter.limit({ key: `embed:${embedKey}:${ip}` })).success) throw rateLimited(deps.limitPeriodSeconds);
  const program = await programOf(deps, embedKey, c.req.method === "GET");
  const origin = c.req.header("origin");
  // The widget's own pages: its configured host, and whatever host this request reached (a page calling its own origin).
  const own = [new URL(c.req.url).origin, ...(deps.widgetHost ? [`https://${deps.widgetHost}`, `http://${deps.widgetHost}`] : [])];
  if (origin !== undefined && !program.program.allowedOrigins.includes(origin) && !own.includes(origin)) {
    throw forbidden("This origin is not allowed to use this widget program");
  }
  c.set("program", program);
  const cors: Record<string, string> = origin
    ? { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": BOOKMARK_HEADER, Vary: "Origin" }
    : {};
  if (c.req.method === "OPTIONS") {
    return c.body(null, 204, {
      ...cors,
      "Access-Control-Allow-Methods": ALLOW_METHODS,
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
    });
  }
  await next();
  for (const [k, v] of Object.entries(cors)) c.res.headers.set(k, v);
};
