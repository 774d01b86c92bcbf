import { and, desc, eq, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * Keyset pagination (DECISIONS.md "Lists"): newest first on (createdAt, id),
 * so rows created in the same millisecond keep a stable order. Cursors are
 * opaque base64url strings of that position.
 */
export type CursorPosition = { createdAt: number; id: string };

export function encodeCursor(p: CursorPosition): string {
  return btoa(`${p.createdAt}|${p.id}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Returns null for anything that is not a cursor this service issued. */
export function decodeCursor(cursor: string): CursorPosition | null {
  try {
    const raw = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const m = /^(\d{1,15})\|([0-9a-f-]{36})$/.exec(raw);
    return m ? { createdAt: Number(m[1]), id: m[2]! } : null;
  } catch {
    return null;
  }
}

/**
 * The condition for rows after `cursor` and the matching order. The HTTP edge
 * validates cursors (PageQuerySchema); one that still fails to decode here is
 * a programming error.
 */
export function newestFirst(columns: { createdAt: SQLiteColumn; id: SQLiteColumn }, cursor: string | undefined) {
  let where: SQL | undefined;
  if (cursor) {
    const after = decodeCursor(cursor);
    if (!after) throw new RangeError("invalid cursor");
    const at = new Date(after.createdAt);
    where = or(lt(columns.createdAt, at), and(eq(columns.createdAt, at), lt(columns.id, after.id)));
  }
  return { where, orderBy: [desc(columns.createdAt), desc(columns.id)] as const };
}

/** Splits rows fetched with `limit + 1` into the page and its next cursor. */
export function pageOf<T extends { createdAt: Date; id: string }>(rows: T[], limit: number): { data: T[]; nextCursor: string | null } {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt.getTime(), id: last.id }) : null;
  return { data, nextCursor };
}

/** Rows in the order of `newestFirst`'s pages (`createdAt`, then `id`, both descending). */
const newestFirstOrder = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * One page of pages read apart over disjoint rows (each with `limit + 1`
 * rows after the same cursor, as `newestFirst` reads them), merged newest
 * first: `pageOf` over the first `limit + 1`.
 */
export function mergedPageOf<T extends { createdAt: Date; id: string }>(pages: T[][], limit: number): { data: T[]; nextCursor: string | null } {
  return pageOf(
    pages
      .flat()
      .sort(newestFirstOrder)
      .slice(0, limit + 1),
    limit,
  );
}
