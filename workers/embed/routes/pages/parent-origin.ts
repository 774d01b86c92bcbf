import type { ProgramContext } from "../../../../shared/embed/program-context.ts";

/** The origin of a URL, or null when it is none (an opaque origin, a malformed header). */
const originOf = (url: string | undefined): string | null => {
  if (!url) return null;
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
};

/**
 * The framing page's origin, only when it is exactly one of the program's
 * allowed origins; otherwise null, and the page posts nothing. From
 * `?parent=` (what widget.js adds), else from the `Referer` the browser sent
 * for the iframe's load (its parent's origin under the default referrer
 * policy): a merchant who embeds the iframe as SPEC.md shows it
 * (`{embed_url}/embed/<embed_key>`, no parameter) still gets
 * `svc:kyc-required`. A page that sends no referrer needs `?parent=`.
 * `frame-ancestors` already keeps the page out of any other origin's frame.
 */
export const parentOriginFor = (program: ProgramContext, parent: string | undefined, referer?: string): string | null => {
  const allowed = (origin: string | null | undefined) => (origin && program.program.allowedOrigins.includes(origin) ? origin : null);
  return parent !== undefined ? allowed(parent) : allowed(originOf(referer));
};
