/**
 * D1 binds at most 100 parameters per statement (libSQL allows far more, so
 * only the workerd tier notices). Multi-row inserts and `IN (…)` lists are
 * split to stay under it.
 */
export const D1_MAX_PARAMS = 100;

/** Rows of a table with `columns` bound columns that fit in one insert. */
export const rowsPerInsert = (columns: number): number => Math.max(1, Math.floor(D1_MAX_PARAMS / columns));

/** Ids per `IN (…)` list, leaving room for the statement's other parameters. */
export const IDS_PER_LIST = 90;

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
