import type { MiddlewareHandler } from "hono";
import { DomainError } from "../domain/errors.ts";

/**
 * A path must be valid percent-encoded UTF-8: `%ED%A0%80` (a lone surrogate) or `%FF` is refused with 400. Hono
 * keeps a segment it cannot decode as its literal text, so `GET /v1/borrowers/%ED%A0%80` answered the borrower whose
 * ref is the text "%ED%A0%80", as `/v1/borrowers/%25ED%25A0%2580` does, and a PATCH there created one.
 */
export const requireDecodablePath = (): MiddlewareHandler => async (c, next) => {
  const raw = c.req.raw.url;
  const start = raw.indexOf("/", raw.indexOf("//") + 2);
  const end = raw.search(/[?#]/);
  const path = start < 0 ? "/" : raw.slice(start, end < 0 ? undefined : end);
  if (path.includes("%")) {
    try {
      decodeURIComponent(path);
    } catch {
      throw new DomainError("VALIDATION", "The request path is not valid percent-encoded UTF-8");
    }
  }
  return next();
};
