import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GEOMETRIC_GROWTH, miniflareBundlePath, patchMiniflareSource, QUADRATIC_GROWTH } from "./patch-miniflare.ts";

const arena = (growth: string) => `function allocate$1(minSize, segments, s) {\n  ${growth}\n  new Float64Array(s.buffer).set(new Float64Array(srcBuffer));\n}`;

describe("Miniflare's config arena grows geometrically (npm install's postinstall)", () => {
  test("the one quadratic growth is replaced; a second run changes nothing", () => {
    const first = patchMiniflareSource(arena(QUADRATIC_GROWTH));
    expect(first.outcome).toBe("patched");
    expect(first.source).toBe(arena(GEOMETRIC_GROWTH));
    expect(patchMiniflareSource(first.source)).toEqual({ source: first.source, outcome: "already patched" });
  });

  test("code it was not written for is left as it is: no site, or more than one", () => {
    const other = arena("s.buffer = grow(srcBuffer, minSize);");
    expect(patchMiniflareSource(other)).toEqual({ source: other, outcome: "not found" });
    const twice = arena(QUADRATIC_GROWTH) + arena(QUADRATIC_GROWTH);
    expect(patchMiniflareSource(twice)).toEqual({ source: twice, outcome: "not found" });
  });

  // Fails after a Miniflare upgrade the patch no longer fits: every local stack would start 2 s slower, unnoticed.
  test("the installed Miniflare is patched", () => {
    const path = miniflareBundlePath();
    expect(path).not.toBeNull();
    const source = readFileSync(path!, "utf8");
    expect(source).toContain(GEOMETRIC_GROWTH);
    expect(source).not.toContain(QUADRATIC_GROWTH);
  });
});
