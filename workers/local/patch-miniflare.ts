import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * `npm install`'s postinstall: makes Miniflare's workerd config encoding
 * linear instead of quadratic. Tooling only: nothing deployed runs Miniflare.
 *
 * Miniflare hands workerd its config as one Cap'n Proto message, built by its
 * bundled capnp-es in a single-segment arena. That arena grows by only what
 * each allocation needs (4 KiB at least) and copies the whole buffer every
 * time, so writing our four bundles (about 14 MB of script) plus the
 * thousands of small structs after them copies gigabytes: 2 to 2.5 s of CPU
 * in every local stack start, of about 3.5 s (measured on the 2-core machine
 * on 2026-11-24; four stacks started at once took 17 s, 7.5 s patched).
 * Miniflare 4.20260730.0, the newest on npm that day, has the same code.
 *
 * The patch grows the arena geometrically (by at least its current size),
 * the usual remedy: the message is the same bytes, since it is written from
 * each segment's used length, never from its buffer's.
 */
export const QUADRATIC_GROWTH = "s.buffer = new ArrayBuffer(srcBuffer.byteLength + minSize);";
export const GEOMETRIC_GROWTH =
  "s.buffer = new ArrayBuffer(srcBuffer.byteLength + Math.max(minSize, srcBuffer.byteLength)); /* svc-credit: workers/local/patch-miniflare.ts */";

export type PatchOutcome = "patched" | "already patched" | "not found";

/** Miniflare's bundle with the arena's growth made geometric, and what was done. */
export function patchMiniflareSource(source: string): { source: string; outcome: PatchOutcome } {
  if (source.includes(GEOMETRIC_GROWTH)) return { source, outcome: "already patched" };
  const at = source.indexOf(QUADRATIC_GROWTH);
  // Exactly one site, or the code is not the one this patch was written for.
  if (at < 0 || source.indexOf(QUADRATIC_GROWTH, at + 1) >= 0) return { source, outcome: "not found" };
  return { source: source.replace(QUADRATIC_GROWTH, GEOMETRIC_GROWTH), outcome: "patched" };
}

/** The installed Miniflare bundle (the one wrangler uses too: npm dedupes it). */
export function miniflareBundlePath(): string | null {
  try {
    const main = createRequire(import.meta.url).resolve("miniflare");
    return existsSync(main) ? main : null;
  } catch {
    return null;
  }
}

if (import.meta.main) {
  const path = miniflareBundlePath();
  if (!path) {
    console.log("patch-miniflare: miniflare is not installed (nothing to patch)");
  } else {
    const { source, outcome } = patchMiniflareSource(readFileSync(path, "utf8"));
    if (outcome === "patched") writeFileSync(path, source);
    // A newer Miniflare without this code still works, only slower: say so, and
    // let workers/local/patch-miniflare.test.ts fail until the patch is looked at again.
    console.log(`patch-miniflare: ${outcome === "not found" ? "the arena growth was not found; Miniflare left as it is" : outcome} (${path})`);
  }
}
