/** The Workers rate-limiting binding's interface, as both workers declare it. */
type RateLimiter = { limit(options: { key: string }): Promise<{ success: boolean }> };

/**
 * A fixed-window limiter with the rate-limiting binding's interface, for the
 * Bun tier only; deployed and miniflare runs use the real binding.
 */
export function memoryRateLimiter(limit: number, periodMs: number, now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    async limit({ key }) {
      const t = now();
      const w = windows.get(key);
      if (!w || t - w.start >= periodMs) {
        windows.set(key, { start: t, count: 1 });
        return { success: true };
      }
      w.count += 1;
      return { success: w.count <= limit };
    },
  };
}
