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

/** The path under /dashboard of the current location ("/" for /dashboard itself). */
export const currentPath = (): string => location.pathname.slice(BASE.length) || "/";
