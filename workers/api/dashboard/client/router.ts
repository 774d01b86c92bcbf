import type { Page } from "./context.ts";

export const BASE = "/dashboard";

/** The page whose pattern matches `path` (under /dashboard), with its parameters. */
export function match(pages: Page[], path: string): { page: Page; params: Record<string, string> } | null {
  const parts = path.split("/").filter(Boolean);
  for (const page of pages) {
    const pattern = page.path.split("/").filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    pattern.forEach((seg, i) => {
      if (seg.startsWith(":")) params[seg.slice(1)] = decodeURIComponent(parts[i]!);
      else if (seg !== parts[i]) ok = false;
    });
    if (ok) return { page, params };
  }
  return null;
}

/**
 * A borrower ref that a URL path cannot carry: "." and ".." are dot segments,
 * which the browser resolves away (so are their %2E forms, by the WHATWG URL
 * rules), so `/borrowers/..` would lead to another page.
 */
export const isDotSegment = (ref: string): boolean => ref === "." || ref === "..";

/**
 * The path under /dashboard of a borrower's page: by its ref, URL-encoded,
 * or by its id when the ref is a dot segment (`isDotSegment`). The page reads
 * either (`GET /v1/borrowers/:id` takes the id or the ref).
 *
 * @example borrowerPath({ borrowerRef: "user 42", borrowerId: "…" }) // "/borrowers/user%2042"
 * @example borrowerPath({ borrowerRef: "..", borrowerId: "6f1c…" }) // "/borrowers/6f1c…"
 */
export const borrowerPath = (borrower: { borrowerRef: string; borrowerId: string }): string =>
  `/borrowers/${encodeURIComponent(isDotSegment(borrower.borrowerRef) ? borrower.borrowerId : borrower.borrowerRef)}`;

/** The path under /dashboard of the current location ("/" for /dashboard itself). */
export const currentPath = (): string => location.pathname.slice(BASE.length) || "/";
