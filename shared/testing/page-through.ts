/** Every item of a paged list, following `nextCursor` to the end (a list that never ends fails). */
export async function pageThrough<T>(page: (cursor: string | undefined) => Promise<{ data: T[]; nextCursor: string | null }>, maxPages = 100): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < maxPages; pages++) {
    const { data, nextCursor } = await page(cursor);
    items.push(...data);
    if (!nextCursor) return items;
    cursor = nextCursor;
  }
  throw new Error(`the list did not end within ${maxPages} pages`);
}
