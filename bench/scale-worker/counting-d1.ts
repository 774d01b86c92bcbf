/** Statement methods that each make one round trip to D1. */
const ROUND_TRIPS = new Set<PropertyKey>(["all", "run", "first", "raw"]);

/** One round trip: its SQL (or `batch of n`) and how long it took, in ms. */
export type RoundTrip = { sql: string; ms: number };

/**
 * `db` recording its round trips: each statement's `all`/`run`/`first`/`raw`,
 * each `batch` and each `exec` is one, timed from the call to its answer (in
 * workerd the clock moves across I/O, which is what a round trip is). The
 * statements it hands out are proxies of D1's own; `batch` gets the originals.
 *
 * @example const { db, roundTrips } = countingD1(env.DB); await job(db); roundTrips().length
 */
export function countingD1(db: D1Database): { db: D1Database; roundTrips: () => RoundTrip[] } {
  const trips: RoundTrip[] = [];
  const timed = <T>(sql: string, call: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    return call().finally(() => trips.push({ sql, ms: Date.now() - started }));
  };
  const originals = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args), sql);
        if (ROUND_TRIPS.has(prop)) return (...args: unknown[]) => timed(sql, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    originals.set(proxy, statement);
    return proxy;
  };
  const counted = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query), query);
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => timed(`batch of ${statements.length}`, () => target.batch(statements.map((s) => originals.get(s) ?? s)));
      }
      if (prop === "exec") return (query: string) => timed(query, () => target.exec(query));
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: counted, roundTrips: () => [...trips] };
}
