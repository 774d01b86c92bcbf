/**
 * Errors of the platform rather than of the request: D1 overloaded, reset or
 * unreachable, a Durable Object reset or overloaded, a network connection
 * lost (and the chaos suite's injected faults, which imitate them). Workers
 * answer them 503 with `Retry-After` (the client retries with the same
 * idempotency key), and single writers retry idempotent commands once.
 * Constraint violations and bugs are not transient: they stay 500.
 */
const TRANSIENT_MESSAGE =
  /injected fault \(chaos\)|Durable Object reset|durable object .*(overloaded|reset)|storage caused object to be reset|D1_ERROR: .*(overloaded|reset|network|timed? ?out|internal error)|Network connection lost|D1 DB .*(overloaded|unavailable)|Too many requests queued/i;

export function isTransientError(err: unknown): boolean {
  // Drizzle wraps a driver's error as the `cause` of its own ("Failed query: …").
  for (let e = err, depth = 0; typeof e === "object" && e !== null && depth < 5; depth++) {
    const x = e as { retryable?: unknown; overloaded?: unknown; message?: unknown; name?: unknown; cause?: unknown };
    if (x.retryable === true || x.overloaded === true || x.name === "InjectedFault") return true;
    if (typeof x.message === "string" && TRANSIENT_MESSAGE.test(x.message)) return true;
    e = x.cause;
  }
  return false;
}

/** Runs `fn`, and again after each of `waitsMs` while it fails with a transient error. */
export async function retryTransient<T>(fn: () => Promise<T>, waitsMs: number[] = [50]): Promise<T> {
  for (const wait of waitsMs) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransientError(err)) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  return fn();
}

/** Runs `fn` up to 3 times while it fails with a transient error (50, 200 ms apart): a read or a claim. */
export const persistently = <T>(fn: () => Promise<T>) => retryTransient(fn, [50, 200]);

/**
 * The record of an outcome after the side effect went out (a webhook
 * request, an e-mail): up to 5 tries over about 2.5 s (D1 answers
 * "overloaded" while its writer's queue is full, which clears in that kind
 * of time). Left unrecorded, the effect would be repeated once its lease ran
 * out and its attempt counted twice.
 */
export const recordPersistently = <T>(fn: () => Promise<T>) => retryTransient(fn, [50, 200, 600, 1500]);
