/**
 * The key-value store a simulated chain runs on: the slice of a Durable
 * Object's `ctx.storage` the engine uses, so the object passes its storage as
 * is, and the Bun tier passes `memorySimStorage()`. Values are structured
 * clones (bigint, nested objects and arrays survive; class instances do not).
 */
export interface SimStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  /** Writes every entry atomically: all or none (Durable Objects allow up to 128 keys). */
  put<T>(entries: Record<string, T>): Promise<void>;
  /** Keys with `prefix`, from `start` (inclusive) on, in ascending key order, at most `limit`. */
  list<T = unknown>(options: { prefix: string; start?: string; limit?: number }): Promise<Map<string, T>>;
}

/**
 * A SimStorage in memory, with the Durable Object semantics the engine relies
 * on: values are copied on the way in and out, `list` is ordered by key.
 *
 * @example
 * const storage = memorySimStorage();
 * await storage.put({ a: 1n, b: 2n });
 * await storage.list<bigint>({ prefix: "" }); // Map { "a" => 1n, "b" => 2n }
 */
export function memorySimStorage(): SimStorage {
  const data = new Map<string, unknown>();
  return {
    async get<T>(key: string) {
      const value = data.get(key);
      return value === undefined ? undefined : (structuredClone(value) as T);
    },
    async put<T>(keyOrEntries: string | Record<string, T>, value?: T) {
      const entries = typeof keyOrEntries === "string" ? { [keyOrEntries]: value } : keyOrEntries;
      // Clone everything before storing anything, so a value that cannot be cloned writes nothing.
      const cloned = Object.entries(entries).map(([k, v]) => [k, structuredClone(v)] as const);
      for (const [k, v] of cloned) data.set(k, v);
    },
    async list<T>({ prefix, start, limit }: { prefix: string; start?: string; limit?: number }) {
      const keys = [...data.keys()].filter((k) => k.startsWith(prefix) && (start === undefined || k >= start)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const out = new Map<string, T>();
      for (const k of keys.slice(0, limit ?? keys.length)) out.set(k, structuredClone(data.get(k)) as T);
      return out;
    },
  };
}
