import type { Client as LibsqlClient } from "@libsql/client";
import { type D1FaultPolicy, InjectedFault, randomSource } from "./faults.ts";

/**
 * Per policy (by its JSON: workers parse their vars on every request), the
 * isolate's faults so far (its budget for `limit`) and its one random
 * sequence, which goes on from request to request.
 */
const injected = new Map<string, { count: number; random: () => number }>();

type Decision = "pass" | "before" | "after";

/**
 * The fault policy of one database handle: whether each statement (a batch
 * is one: it commits or not as a whole) fails, and when.
 */
function faultGuard(policy: D1FaultPolicy) {
  const key = JSON.stringify(policy);
  if (!injected.has(key)) injected.set(key, { count: 0, random: randomSource(policy.seed) });
  const state = injected.get(key)!;
  const match = policy.match ? new RegExp(policy.match, "i") : null;
  let statements = 0;

  const decide = (sqls: string[]): Decision => {
    statements++;
    if (policy.limit !== undefined && state.count >= policy.limit) return "pass";
    if (policy.cutAfter !== undefined && statements > policy.cutAfter) {
      state.count++;
      return "before";
    }
    if (match && !sqls.some((s) => match.test(s))) return "pass";
    if (state.random() >= policy.rate) return "pass";
    state.count++;
    const when = policy.when ?? "either";
    return when === "either" ? (state.random() < 0.5 ? "before" : "after") : when;
  };

  return async function guarded<T>(sqls: string[], run: () => Promise<T>): Promise<T> {
    const decision = decide(sqls);
    if (decision === "before") throw new InjectedFault(`not run: ${sqls[0]?.slice(0, 80)}`);
    const result = await run();
    if (decision === "after") throw new InjectedFault(`ran, answer lost: ${sqls[0]?.slice(0, 80)}`);
    return result;
  };
}

/**
 * Wraps a D1 binding so that a fraction of its statements fail, before they
 * run or after they committed (the answer lost on the way back), as D1 does
 * under load or across a network fault.
 */
export function faultyD1(inner: D1Database, policy: D1FaultPolicy): D1Database {
  const guarded = faultGuard(policy);
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = {
      inner: stmt,
      sql,
      bind: (...values: unknown[]) => wrap(stmt.bind(...values), sql),
      first: (column?: string) => guarded([sql], () => (column === undefined ? stmt.first() : stmt.first(column))),
      run: () => guarded([sql], () => stmt.run()),
      all: () => guarded([sql], () => stmt.all()),
      raw: (options?: { columnNames?: boolean }) => guarded([sql], () => (options?.columnNames ? stmt.raw({ columnNames: true }) : stmt.raw())),
    };
    return wrapped as unknown as D1PreparedStatement;
  };
  const unwrap = (stmt: D1PreparedStatement) => stmt as unknown as { inner: D1PreparedStatement; sql: string };
  const db = {
    prepare: (sql: string) => wrap(inner.prepare(sql), sql),
    batch: <T>(stmts: D1PreparedStatement[]) =>
      guarded(
        stmts.map((s) => unwrap(s).sql),
        () => inner.batch<T>(stmts.map((s) => unwrap(s).inner)),
      ),
    exec: (sql: string) => guarded([sql], () => inner.exec(sql)),
    dump: () => inner.dump(),
    withSession: (constraint?: string) => inner.withSession(constraint),
  };
  return db as unknown as D1Database;
}

type LibsqlStatement = string | { sql: string };
const sqlOf = (s: LibsqlStatement) => (typeof s === "string" ? s : s.sql);

/** The same faults over a libSQL client, for the Bun tier's short fault tests. */
export function faultyLibsql(inner: LibsqlClient, policy: D1FaultPolicy): LibsqlClient {
  const guarded = faultGuard(policy);
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "execute") return (stmt: LibsqlStatement, args?: never) => guarded([sqlOf(stmt)], () => target.execute(stmt as never, args));
      if (prop === "batch") return (stmts: LibsqlStatement[], mode?: never) => guarded(stmts.map(sqlOf), () => target.batch(stmts as never, mode));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
