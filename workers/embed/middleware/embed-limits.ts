import type { MiddlewareHandler } from "hono";
import { rateLimited } from "../../../shared/domain/errors.ts";
import type { EmbedAppEnv } from "../env.ts";

export const clientIp = (c: { req: { header(name: string): string | undefined } }) => c.req.header("cf-connecting-ip") ?? "unknown";

/**
 * Every call and page that names an embed key: an IP whose 404s (unknown or
 * deleted keys, loans that are not there, paths that do not exist) have
 * spent its miss budget gets 429 before any lookup until the window ends,
 * so keys cannot be enumerated or the database flooded through misses. Each
 * 404 spends one unit; the one that exhausts the budget is answered 429.
 */
export const embedFailureGate: MiddlewareHandler<EmbedAppEnv> = async (c, next) => {
  const { misses } = c.get("deps");
  const ip = clientIp(c);
  const wait = misses.blockedFor(ip);
  if (wait > 0) throw rateLimited(wait);
  await next();
  if (c.res.status === 404 && !(await misses.spend(ip))) throw rateLimited(misses.periodSeconds);
};

/**
 * The widget page, the repay page and the TON Connect manifest: limited per
 * embed key and client IP like the embed API (`EMBED_LIMITER`), with their
 * own count (`page:` keys), so loading pages does not eat the API's budget.
 */
export const pageLimit: MiddlewareHandler<EmbedAppEnv> = async (c, next) => {
  const { limiter, limitPeriodSeconds } = c.get("deps");
  const embedKey = c.req.param("embedKey") ?? "";
  if (!(await limiter.limit({ key: `page:${embedKey}:${clientIp(c)}` })).success) throw rateLimited(limitPeriodSeconds);
  return next();
};
