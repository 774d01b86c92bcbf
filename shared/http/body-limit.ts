import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { DomainError } from "../domain/errors.ts";

/** The largest request body any worker reads; every JSON body of the API is far smaller. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Refuses a body over `MAX_BODY_BYTES` with 413 and the spec's error body,
 * from its `content-length` before it is read, or while it streams when
 * there is none, so an oversized body is never parsed.
 */
export const limitBodySize = (): MiddlewareHandler =>
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new DomainError("PAYLOAD_TOO_LARGE", `Request body exceeds ${MAX_BODY_BYTES} bytes`);
    },
  });
