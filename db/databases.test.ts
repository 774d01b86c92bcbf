import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");

/**
 * Files that may touch a D1 binding by name, and why: the seam itself, and
 * the development-only wrappers that wrap the binding (a sharded deployment
 * wraps each of its bindings the same way).
 */
const ALLOWED: Record<string, string> = {
  "db/databases.ts": "the seam: which database a call site gets",
  "shared/chaos/chaos-env.ts": "wraps the binding with injected faults (development only)",
  "shared/observability/round-trips.ts": "wraps the binding to count round trips (development only)",
};

function productionFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name === "local" || name === "testing" ? [] : productionFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.includes(".generated.") ? [path] : [];
  });
}

describe('one database, said in one place (README "Past one D1")', () => {
  test("production code reads the D1 binding only through db/databases.ts", () => {
    const offenders: string[] = [];
    for (const file of ["workers", "shared", "db"].flatMap((d) => productionFiles(join(ROOT, d)))) {
      const rel = relative(ROOT, file);
      if (ALLOWED[rel]) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, "");
          if (/^\s*\*/.test(line)) return; // a doc comment's example
          if (/\.DB\b/.test(code)) offenders.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
