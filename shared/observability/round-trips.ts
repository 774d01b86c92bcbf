import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Round-trip counting for the bench (development only): how many D1 round
 * trips (a statement or a batch each) and Durable Object calls one request
 * makes, including those the Durable Objects it calls make on its behalf.
 * On when ENVIRONMENT is "development" and COUNT_ROUND_TRIPS is "1" (the
 * bench sets it); a deployment never counts. The api answers with the count
 * in `x-round-trips`; a loan object returns its own with its RPC result.
 *
 * The counting env is made once per env (so whatever a worker builds once
 * per env stays built once), and counts into the counter of the request it
 * runs in (`countRoundTrips`, an AsyncLocalStorage scope).
 */

export type RoundTripVars = { ENVIRONMENT?: string; COUNT_ROUND_TRIPS?: string };

/** What one request (or one Durable Object call) cost. */
export type RoundTrips = { d1: number; doCalls: number };

/** A request's own round trips, and those of the Durable Objects it called (as they reported them). */
export type RoundTripCounter = RoundTrips & { inObjects: RoundTrips };

/** The response header the api puts the count in (JSON of a RoundTripCounter). */
export const ROUND_TRIPS_HEADER = "x-round-trips";

/** The bindings counted: the D1 database and every Durable Object namespace a worker holds. */
const OBJECT_BINDINGS = ["LOANS", "SIM_CHAINS", "AGREEMENT_CHALLENGES", "EVM_SENDERS"] as const;

type CountedEnv = RoundTripVars & { DB?: D1Database } & Partial<Record<(typeof OBJECT_BINDINGS)[number], unknown>>;

export const countsRoundTrips = (env: RoundTripVars): boolean => env.ENVIRONMENT === "development" && env.COUNT_ROUND_TRIPS === "1";

export const newRoundTripCounter = (): RoundTripCounter => ({ d1: 0, doCalls: 0, inObjects: { d1: 0, doCalls: 0 } });

/** All of it: the request's own and its objects'. */
export const totalRoundTrips = (c: RoundTripCounter): RoundTrips => ({ d1: c.d1 + c.inObjects.d1, doCalls: c.doCalls + c.inObjects.doCalls });

const scope = new AsyncLocalStorage<RoundTripCounter>();
const countingEnvs = new WeakMap<object, object>();

/** Runs `fn` (a request, a Durable Object call) counting its round trips into `counter`. */
export const countRoundTrips = <T>(counter: RoundTripCounter, fn: () => T): T => scope.run(counter, fn);

/**
 * Runs `fn` outside the current request's count: work the request leaves
 * running after its response (the relay after a write, in `waitUntil`).
 * Its first statement goes out before the response does, so without this
 * the request's count would include it.
 */
export const uncounted = <T>(fn: () => T): T => (scope.getStore() ? scope.run(newRoundTripCounter(), fn) : fn());

/** The counter of the request running now; outside `countRoundTrips`, one that nobody reads. */
const current = (): RoundTripCounter => scope.getStore() ?? newRoundTripCounter();

/**
 * The env with its D1 binding and Durable Object namespaces counting into
 * the current request's counter (the same object for the same env), or null
 * when counting is off (the env is then used as it is).
 */
export function withRoundTripCount<E extends CountedEnv>(env: E): E | null {
  if (!countsRoundTrips(env)) return null;
  const known = countingEnvs.get(env);
  if (known) return known as E;
  const out: Record<string, unknown> = { ...env };
  if (env.DB) out.DB = countingD1(env.DB, current);
  for (const name of OBJECT_BINDINGS) {
    const namespace = env[name];
    if (namespace) out[name] = countingNamespace(namespace as DurableObjectNamespace, current);
  }
  countingEnvs.set(env, out);
  return out as E;
}

/** A D1 binding that counts each statement it runs and each batch as one round trip, into `counter()`. */
export function countingD1(inner: D1Database, counter: () => RoundTrips): D1Database {
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const counted = <T>(run: () => Promise<T>) => {
      counter().d1++;
      return run();
    };
    const wrapped = {
      inner: stmt,
      bind: (...values: unknown[]) => wrap(stmt.bind(...values)),
      first: (column?: string) => counted(() => (column === undefined ? stmt.first() : stmt.first(column))),
      run: () => counted(() => stmt.run()),
      all: () => counted(() => stmt.all()),
      raw: (options?: { columnNames?: boolean }) => counted(() => (options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw())),
    };
    return wrapped as unknown as D1PreparedStatement;
  };
  const unwrap = (stmt: D1PreparedStatement) => (stmt as unknown as { inner: D1PreparedStatement }).inner;
  const db = {
    prepare: (sql: string) => wrap(inner.prepare(sql)),
    batch: <T>(stmts: D1PreparedStatement[]) => {
      counter().d1++;
      return inner.batch<T>(stmts.map(unwrap));
    },
    exec: (sql: string) => {
      counter().d1++;
      return inner.exec(sql);
    },
    dump: () => inner.dump(),
    withSession: (constraint?: string) => inner.withSession(constraint),
  };
  return db as unknown as D1Database;
}

/**
 * A Durable Object namespace whose stubs count every call as one; a result
 * that carries `roundTrips` (a loan object's) adds the object's own count.
 */
function countingNamespace(inner: DurableObjectNamespace, counterOf: () => RoundTripCounter): DurableObjectNamespace {
  const countingStub = (stub: DurableObjectStub) =>
    new Proxy(stub, {
      get(target, prop, receiver) {
        if (typeof prop === "symbol" || prop === "then" || prop === "id" || prop === "name") return Reflect.get(target, prop, receiver);
        return async (...args: unknown[]) => {
          const counter = counterOf();
          counter.doCalls++;
          const result: unknown = await (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[prop]!(...args);
          const reported = (result as { roundTrips?: RoundTrips } | null)?.roundTrips;
          if (reported && typeof reported === "object") {
            counter.inObjects.d1 += reported.d1;
            counter.inObjects.doCalls += reported.doCalls;
          }
          return result;
        };
      },
    });
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "get") return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => countingStub(target.get(id, options));
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
