import { getTableColumns, is, Param, Placeholder, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "./create-db.ts";

/** What drizzle's `db.batch()` asks of an item (see prepared-batch.ts). */
type PreparedQuery = {
  getQuery(): { sql: string; params: unknown[] };
  stmt?: unknown;
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
};
type Preparable = { _prepare(): PreparedQuery };

/** One bound value of a built statement: fixed, or a placeholder filled per call (through its column's encoder, if any). */
type Slot = { fixed: unknown } | { name: string; encoder: { mapToDriverValue(value: unknown): unknown } | null };

type Built = { prepared: PreparedQuery; sql: string; slots: Slot[] };

/**
 * A write statement whose SQL is built once per database and filled with
 * each call's values: a batch item like any drizzle query, for the hot
 * writes of a loan (its insert, its events, its settlements).
 *
 * Building a statement is most of the CPU drizzle spends on a write: every
 * chunk of it goes through `is()` checks that walk prototype chains (about
 * 1 ms of CPU per loan in workerd before these). `build` writes the
 * statement as usual with `p(name)` (a `sql.placeholder`) wherever a value
 * goes; it runs once per database. A call then binds each placeholder's
 * value through the column encoder the statement gave it (bigint units,
 * JSON, timestamps), as drizzle's own `fillPlaceholders` does, except that
 * null binds NULL (an insert of a null value writes NULL; an encoder would
 * turn it into "null" JSON or fail on a Date). A value missing from the
 * call is a bug, not a default: it throws.
 *
 * `build` must give the same SQL every time (its shape, not a query).
 */
export function preparedStatement<V extends Record<string, unknown>>(
  build: (db: Db, p: <T>(name: keyof V & string) => T) => BatchItem<"sqlite">,
): (db: Db, values: V) => BatchItem<"sqlite"> {
  const built = new WeakMap<Db, Built>();
  const p = <T>(name: string) => sql.placeholder(name) as unknown as T;
  return (db, values) => {
    let b = built.get(db);
    if (!b) {
      const prepared = (build(db, p) as unknown as Preparable)._prepare();
      const query = prepared.getQuery();
      b = { prepared, sql: query.sql, slots: query.params.map(slotOf) };
      built.set(db, b);
    }
    const { prepared, sql: text, slots } = b;
    const params = slots.map((slot) => fill(slot, values));
    const item: PreparedQuery = {
      getQuery: () => ({ sql: text, params }),
      stmt: prepared.stmt,
      mapResult: (response, isFromBatch) => prepared.mapResult(response, isFromBatch),
    };
    return { _prepare: () => item } as unknown as BatchItem<"sqlite">;
  };
}

function slotOf(param: unknown): Slot {
  if (is(param, Placeholder)) return { name: param.name, encoder: null };
  if (is(param, Param) && is(param.value, Placeholder)) {
    const { encoder } = param as unknown as { encoder?: { mapToDriverValue(value: unknown): unknown } };
    return { name: param.value.name, encoder: encoder ?? null };
  }
  return { fixed: param };
}

function fill(slot: Slot, values: Record<string, unknown>): unknown {
  if ("fixed" in slot) return slot.fixed;
  const value = values[slot.name];
  if (value === undefined) throw new Error(`preparedStatement: no value for ${slot.name}`);
  if (value === null) return null;
  return slot.encoder ? slot.encoder.mapToDriverValue(value) : value;
}

/** A row of `table` with a placeholder (named for its key) for every column: for an insert built by `preparedStatement`. */
export function placeholderRow<T extends SQLiteTable>(table: T, p: <V>(name: never) => V): T["$inferInsert"] {
  return Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, p(key as never)])) as T["$inferInsert"];
}
