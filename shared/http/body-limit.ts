import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { DomainError } from "../domain/errors.ts";

/** The largest request body any worker reads; every JSON body of the API is far smaller. */
export const MAX_BODY_BYTES = 64 * 1024;
/**
 * A body over the cap but within this is read to its end (and dropped)
 * before the 413 goes out. Answering while the client is still sending makes
 * the runtime close the connection under it, and the client then sees a
 * reset instead of the 413 (an audit saw 10–30% of 70 KiB posts reset).
 * Beyond this, the answer does not wait for the body.
 */
export const DRAINED_BODY_BYTES = 1024 * 1024;

const tooLarge = () => new DomainError("PAYLOAD_TOO_LARGE", `Request body exceeds ${MAX_BODY_BYTES} bytes`);

/**
 * How long a drain waits for the declared body. A client that declares a length and sends nothing would otherwise
 * hold the request open for free (an audit's `GET /v1/health` with `content-length: 500000` was never answered).
 */
export const DRAIN_TIMEOUT_MS = 5_000;

/** Reads and drops `body`, at most `max` bytes of it, for at most `DRAIN_TIMEOUT_MS`. */
async function drain(body: ReadableStream<Uint8Array> | null, max: number): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  let read = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), DRAIN_TIMEOUT_MS);
  });
  try {
    while (read <= max) {
      const chunk = await Promise.race([reader.read(), timedOut]);
      if (chunk === "timeout" || chunk.done) break;
      read += chunk.value.byteLength;
    }
    await reader.cancel().catch(() => {});
  } catch {
    // The client went away: nothing to drain.
  } finally {
    clearTimeout(timer);
  }
}

/** Methods whose requests carry no body the API reads: a declared oversized one is refused without waiting for it. */
const BODYLESS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/**
 * Refuses a body over `MAX_BODY_BYTES` with 413 and the spec's error body,
 * from its `content-length` before it is parsed, or while it streams when
 * there is none, so an oversized body is never parsed. A declared length up
 * to `DRAINED_BODY_BYTES` is read to its end first, so the client receives
 * the 413 rather than a reset connection.
 */
export const limitBodySize = (): MiddlewareHandler => {
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw tooLarge();
    },
  });
  return async (c, next) => {
    const declared = Number(c.req.header("content-length") ?? Number.NaN);
    if (declared > MAX_BODY_BYTES && declared <= DRAINED_BODY_BYTES) {
      if (!BODYLESS.has(c.req.method)) await drain(c.req.raw.body, DRAINED_BODY_BYTES);
      throw tooLarge();
    }
    return limit(c, next);
  };
};

/**
 * A request body must be sent as is: `Content-Encoding` other than `identity` is refused with 415 (RFC 9110
 * §15.5.16) and `Accept-Encoding: identity`, rather than read as if it were not encoded (a gzip body then failed as
 * "Malformed JSON", and a `br` label on a plain body was silently ignored).
 */
export const requireIdentityEncoding = (): MiddlewareHandler => async (c, next) => {
  const coding = (c.req.header("content-encoding") ?? "").trim().toLowerCase();
  if (coding !== "" && coding !== "identity" && !BODYLESS.has(c.req.method)) {
    throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `Content-Encoding ${coding} is not supported: send the request body uncompressed`, {
      "Accept-Encoding": "identity",
    });
  }
  return next();
};

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JSON body must be UTF-8 (RFC 8259): bytes that are not are refused with
 * 400 "Malformed JSON in request body", as any other malformed JSON.
 * Without this the runtime's lenient decoding stored U+FFFD in place of
 * them, in a merchant's borrowerRef for instance, which then never matched
 * the reference the merchant holds. Checked when the route parses the body
 * (`c.req.json()`, as its validator does), so routing and authentication
 * answer first: a bad body to an unknown route is 404, without credentials
 * 401, as any other body (it was 400 before either). Hono caches the bytes.
 */
export const requireUtf8Json = (): MiddlewareHandler => async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD" && /^application\/(.+\+)?json\b/i.test(c.req.header("content-type") ?? "")) {
    const req = c.req;
    const lenient = req.json.bind(req);
    req.json = async <T>() => {
      try {
        strictUtf8.decode(await req.arrayBuffer());
      } catch (err) {
        // Answered as every malformed JSON body is (shared/http/errors.ts).
        if (err instanceof TypeError) throw new HTTPException(400, { message: "Malformed JSON in request body" });
        throw err;
      }
      return lenient<T>();
    };
  }
  return next();
};
