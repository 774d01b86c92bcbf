/**
 * D1 binds at most 100 parameters per statement (libSQL allows far more, so
 * only the workerd tier notices). `IN (…)` lists are split to stay under it;
 * many-row inserts take their rows as one JSON parameter (json-rows.ts).
 */

/** Ids per `IN (…)` list, leaving room for the statement's other parameters. */
export const IDS_PER_LIST = 90;

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
