import type { TestApp } from "./harness.ts";

/**
 * Inserts `copies` copies of each loan matching `where` (SQL over the alias
 * `l`, with `args`), in one statement: every column as the loan's, except
 * those `set` gives as SQL over `l` and the copy's number `n.i` (1 to
 * `copies`). Ids, keys and write tokens must differ: `set` says how.
 *
 * @example await copyLoans(t, { where: "l.tenant_id = ?", args: [tenantId], copies: 50, set: { id: "l.id || '-' || n.i" } })
 */
export async function copyLoans(t: TestApp, q: { where: string; args: string[]; copies: number; set: Record<string, string> }) {
  const columns = (await t.client.execute("SELECT name FROM pragma_table_info('loans') ORDER BY cid")).rows.map((r) => String(r.name));
  await t.client.execute({
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${q.copies})
          INSERT INTO loans (${columns.join(", ")}) SELECT ${columns.map((c) => q.set[c] ?? `l.${c}`).join(", ")} FROM n, loans AS l WHERE ${q.where}`,
    args: q.args,
  });
}
