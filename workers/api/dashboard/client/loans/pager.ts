import type { Ctx } from "../context.ts";
import { el } from "../dom.ts";
import { BASE } from "../router.ts";

/**
 * The API's cursor pagination as links: "Next page" carries `nextCursor` as
 * `?cursor=` with the page's other query parameters (its filters), and
 * "First page" drops the cursor. Links, so the page is addressable.
 */
export function pager(ctx: Ctx, path: string, nextCursor: string | null, label = "Pages"): HTMLElement | null {
  const onLaterPage = ctx.query.has("cursor");
  if (!nextCursor && !onLaterPage) return null;
  const withCursor = (cursor: string | null) => {
    const q = new URLSearchParams(ctx.query);
    if (cursor) q.set("cursor", cursor);
    else q.delete("cursor");
    const s = q.toString();
    return `${BASE}${path}${s ? `?${s}` : ""}`;
  };
  return el(
    "nav",
    { class: "actions pager", "aria-label": label },
    onLaterPage ? el("a", { href: withCursor(null) }, "First page") : null,
    nextCursor ? el("a", { href: withCursor(nextCursor), rel: "next" }, "Next page") : null,
  );
}

/** `?a=1&b=2` from the non-empty entries (for API and dashboard paths alike). */
export function queryString(params: Record<string, string | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
