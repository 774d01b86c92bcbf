/** The Workers rate-limiting binding's shape (and the tests' in-memory one). */
export type RateLimiter = { limit(options: { key: string }): Promise<{ success: boolean }> };

/**
 * A client IP's budget of failures (credentials that resolve to nobody, embed
 * keys or loans that do not exist), counted by a rate-limiting binding.
 *
 * The binding can only count, not be asked whether a key is over its limit,
 * so the IP's exhaustion is remembered here, in this worker instance, until
 * the window ends: `blockedFor` answers without counting, and the callers
 * refuse such an IP's requests before any lookup. The memory is bounded; an
 * IP forgotten early is simply counted again by the binding.
 */
export type FailureBudget = {
  /** Seconds until the IP may be looked up again, or 0. */
  blockedFor(ip: string): number;
  /** Spends one failure; false when that exhausted the budget (the IP is now blocked). */
  spend(ip: string): Promise<boolean>;
  periodSeconds: number;
};

const MAX_REMEMBERED = 10_000;

export function failureBudget(
  limiter: RateLimiter,
  options: { prefix: string; periodSeconds: number; blocked: Map<string, number>; now?: () => number },
): FailureBudget {
  const now = options.now ?? Date.now;
  const { blocked, periodSeconds } = options;
  return {
    periodSeconds,
    blockedFor(ip) {
      const until = blocked.get(ip);
      if (until === undefined) return 0;
      const left = until - now();
      if (left > 0) return left / 1000;
      blocked.delete(ip);
      return 0;
    },
    async spend(ip) {
      if ((await limiter.limit({ key: `${options.prefix}:${ip}` })).success) return true;
      if (blocked.size >= MAX_REMEMBERED) {
        const t = now();
        for (const [k, until] of blocked) if (until <= t) blocked.delete(k);
        // Still full: drop the oldest entries (Map keeps insertion order).
        for (const k of blocked.keys()) {
          if (blocked.size < MAX_REMEMBERED) break;
          blocked.delete(k);
        }
      }
      blocked.set(ip, now() + periodSeconds * 1000);
      return false;
    },
  };
}
