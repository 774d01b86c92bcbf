import { expect } from "bun:test";

/** Rows in a list's order: newest first, ties by id descending (as the lists' cursors page). */
export const newestFirst = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Each filter combination, listed to the end (`listed`), gives exactly the
 * rows its definition (`matches`) picks from `rows`, newest first; and the
 * data makes the filters mean something: most combinations match some rows.
 */
export async function expectListsMatchDefinition<F, R extends { createdAt: Date; id: string }>(o: {
  combos: F[];
  rows: R[];
  matches: (row: R, filters: F) => boolean;
  listed: (filters: F) => Promise<string[]>;
}): Promise<void> {
  let nonEmpty = 0;
  for (const filters of o.combos) {
    const expected = o.rows
      .filter((r) => o.matches(r, filters))
      .sort(newestFirst)
      .map((r) => r.id);
    if (expected.length > 0) nonEmpty++;
    expect({ filters, ids: await o.listed(filters) }).toEqual({ filters, ids: expected });
  }
  expect(nonEmpty).toBeGreaterThan(o.combos.length / 2);
}
