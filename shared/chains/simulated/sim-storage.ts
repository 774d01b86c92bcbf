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

/**
 * A SimStorage that remembers what it read, in front of the storage of the
 * object that is its only writer (a simulated chain's Durable Object): a
 * balance, a nonce or the chain's head is read from storage once, then from
 * memory. Writes go to storage first; a key already remembered is updated
 * once the write is stored (a key only written, such as a new block, is not
 * kept), so a failed write leaves memory as storage is (and a Durable Object
 * whose write fails is reset anyway, memory and all). A read that a write
 * overtook is not remembered. Values are copied on the way in and out, as
 * storage copies them. At most `maxEntries` keys are kept (the least
 * recently used go first): the keys every operation reads are few. `list`
 * always reads storage.
 *
 * @example new SimChainEngine(chain, cachedSimStorage(ctx.storage), clock, name)
 */
export function cachedSimStorage(storage: SimStorage, maxEntries = 1_000): SimStorage {
  const kept = new Map<string, { value: unknown }>();
  let writes = 0;
  const keep = (key: string, value: unknown) => {
    kept.delete(key);
    kept.set(key, { value: structuredClone(value) });
    if (kept.size > maxEntries) kept.delete(kept.keys().next().value!);
  };
  return {
    async get<T>(key: string) {
      const hit = kept.get(key);
      if (hit) {
        kept.delete(key);
        kept.set(key, hit);
        return structuredClone(hit.value) as T | undefined;
      }
      const before = writes;
      const value = await storage.get<T>(key);
      if (writes === before) keep(key, value);
      return value;
    },
    async put<T>(keyOrEntries: string | Record<string, T>, value?: T) {
      const entries = typeof keyOrEntries === "string" ? { [keyOrEntries]: value as T } : keyOrEntries;
      writes++;
      try {
        await storage.put(entries);
      } catch (error) {
        // What was stored is unknown: forget those keys rather than guess.
        for (const key of Object.keys(entries)) kept.delete(key);
        throw error;
      }
      for (const [key, v] of Object.entries(entries)) if (kept.has(key)) keep(key, v);
    },
    list: (options) => storage.list(options),
  };
}
