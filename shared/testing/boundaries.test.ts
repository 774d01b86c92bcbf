import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The import rules of STYLE.md ("Imports flow one way: workers/* → shared →
 * db"), checked by reading every import of every .ts/.tsx file:
 *
 * 1. A worker (workers/api, embed, cron, webhooks) imports no other worker,
 *    tests included. Workers talk through D1, Queues, Durable Object and
 *    service bindings, with their message types in shared/.
 * 2. workers/local is tooling (the local stack, the build, the workerd test
 *    helper): it may import any worker, since it builds and boots them; no
 *    worker imports it.
 * 3. shared/testing is the Bun-tier test harness (STYLE.md: "a shared test
 *    harness in shared/testing, not inside one worker"): it builds the api
 *    app over an in-memory database, so it may import workers; only tests and
 *    other test tooling (`*.test.ts`, `testing/` folders, workers/local, bench)
 *    import it, never code that ships.
 * 4. The rest of shared/, and db/, never import workers/.
 * 5. shared/domain is pure: it imports only shared/domain and npm packages
 *    (not Hono, drizzle, libSQL or cloudflare:*), nothing of db/ or the rest
 *    of shared/.
 * 6. db/ imports only db/ and the domain's vocabularies (shared/domain).
 */

const ROOT = resolve(import.meta.dir, "../..");
const IO_PACKAGES = /^(hono|@hono\/|drizzle-orm|@libsql\/|cloudflare:)/;

/**
 * Every module specifier of a source text: `import … from`, `import type`,
 * `export … from`, side-effect `import "x"` and dynamic `import("x")`.
 * A match inside a comment only makes the check stricter.
 */
function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[\w$*{}\s,]*?\s*from\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]!);
  return found;
}

type Area = { kind: "worker"; name: string } | { kind: "local" | "testing" | "domain" | "shared" | "db" | "bench" | "other" };

function areaOf(path: string): Area {
  const [top, second] = path.split("/");
  if (top === "workers") return second === "local" ? { kind: "local" } : { kind: "worker", name: second! };
  if (top === "shared") return second === "testing" ? { kind: "testing" } : second === "domain" ? { kind: "domain" } : { kind: "shared" };
  if (top === "db") return { kind: "db" };
  if (top === "bench") return { kind: "bench" };
  return { kind: "other" };
}

const isTestCode = (path: string) =>
  /\.test\.tsx?$/.test(path) || /(^|\/)testing\//.test(path) || path.startsWith("workers/local/") || path.startsWith("bench/");

/** The broken rule for one import, or null when it is allowed. */
function violation(from: string, spec: string): string | null {
  const src = areaOf(from);
  if (!spec.startsWith(".")) {
    return src.kind === "domain" && IO_PACKAGES.test(spec) ? "shared/domain is pure: no Hono, drizzle, libSQL or cloudflare:*" : null;
  }
  const to = relative(ROOT, resolve(ROOT, dirname(from), spec));
  const dst = areaOf(to);
  if (dst.kind === "testing" && src.kind !== "testing" && !isTestCode(from)) return "only tests import shared/testing";
  switch (src.kind) {
    case "worker":
      if (dst.kind === "local") return "a worker never imports workers/local (tooling)";
      if (dst.kind === "worker" && dst.name !== src.name) return `workers/${src.name} imports workers/${dst.name}`;
      return null;
    case "shared":
      return dst.kind === "worker" || dst.kind === "local" ? "shared/ never imports workers/" : null;
    case "domain":
      return dst.kind === "domain" ? null : "shared/domain imports only shared/domain and npm packages";
    case "db":
      return dst.kind === "db" || dst.kind === "domain" ? null : "db/ imports only db/ and shared/domain";
    default:
      return null;
  }
}

async function sourceFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const dir of ["workers", "shared", "db", "bench"]) {
    for await (const f of new Glob("**/*.{ts,tsx}").scan({ cwd: join(ROOT, dir) })) {
      if (f.includes("node_modules/") || f.endsWith(".generated.ts")) continue;
      files.push(`${dir}/${f}`);
    }
  }
  return files.sort();
}

describe("import boundaries", () => {
  test("the parser sees every import form", () => {
    const source = [
      'import { a } from "./a.ts";',
      'import type { B } from "../b.ts";',
      'import * as c from "./c.ts";',
      'import d, { e } from "./d.ts";',
      'import {\n  f,\n  type G,\n} from "./f.ts";',
      'export { h } from "./h.ts";',
      'export * from "./i.ts";',
      'export type { J } from "./j.ts";',
      'import "./k.ts";',
      'const l = await import("./l.ts");',
      'const m = await import ( "./m.ts" );',
      'import { z } from "@hono/zod-openapi";',
    ].join("\n");
    expect(importSpecifiers(source).sort()).toEqual(
      ["./a.ts", "../b.ts", "./c.ts", "./d.ts", "./f.ts", "./h.ts", "./i.ts", "./j.ts", "./k.ts", "./l.ts", "./m.ts", "@hono/zod-openapi"].sort(),
    );
  });

  test("the rules catch each kind of violation", () => {
    expect(violation("workers/embed/routes/x.test.ts", "../../api/app.ts")).toContain("imports workers/api");
    expect(violation("workers/cron/index.ts", "../webhooks/index.ts")).toContain("imports workers/webhooks");
    expect(violation("workers/api/app.ts", "../local/stack.ts")).toContain("workers/local");
    expect(violation("shared/loans/x.ts", "../../workers/api/deps.ts")).toContain("shared/ never imports workers/");
    expect(violation("db/schema/x.ts", "../../workers/api/deps.ts")).toContain("db/");
    expect(violation("db/schema/x.ts", "../../shared/loans/x.ts")).toContain("db/");
    expect(violation("shared/domain/x.ts", "../../db/schema/vocabularies.ts")).toContain("shared/domain");
    expect(violation("shared/domain/x.ts", "../schemas/loan.ts")).toContain("shared/domain");
    expect(violation("shared/domain/x.ts", "drizzle-orm")).toContain("pure");
    expect(violation("workers/api/app.ts", "../../shared/testing/harness.ts")).toContain("only tests");
    // Allowed:
    expect(violation("workers/api/routes/x.test.ts", "../../../shared/testing/harness.ts")).toBeNull();
    expect(violation("workers/embed/testing/harness.ts", "../../../shared/testing/harness.ts")).toBeNull();
    expect(violation("shared/testing/harness.ts", "../../workers/api/app.ts")).toBeNull();
    expect(violation("workers/local/build.ts", "../embed/build-client.ts")).toBeNull();
    expect(violation("db/schema/loans.ts", "../../shared/domain/vocabularies.ts")).toBeNull();
    expect(violation("shared/domain/rails.ts", "./vocabularies.ts")).toBeNull();
    expect(violation("shared/domain/rails.ts", "viem")).toBeNull();
  });

  test("no file of the repository breaks them", async () => {
    const files = await sourceFiles();
    // Sanity: the scan reaches every tree (a wrong root would pass vacuously).
    for (const dir of ["workers/api/", "workers/embed/", "workers/cron/", "workers/webhooks/", "shared/domain/", "db/"]) {
      expect(
        files.some((f) => f.startsWith(dir)),
        dir,
      ).toBe(true);
    }
    const broken: string[] = [];
    let imports = 0;
    for (const file of files) {
      for (const spec of importSpecifiers(await Bun.file(join(ROOT, file)).text())) {
        imports++;
        const why = violation(file, spec);
        if (why) broken.push(`${file} imports ${spec}: ${why}`);
      }
    }
    expect(imports).toBeGreaterThan(files.length);
    expect(broken).toEqual([]);
  });
});
