import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { bundledWorkers, copiedBundles, sourceStamp } from "./build.ts";

const root = mkdtempSync(join(tmpdir(), "svc-stamp-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const write = (path: string, text: string) => {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
};

describe("bundles are rebuilt exactly when their sources change (the build stamp)", () => {
  test("a source, a config or the lock file changes the stamp; tests, generated files and tooling do not", () => {
    write("shared/money.ts", "export const a = 1;");
    write("workers/api/index.ts", "export default {};");
    write("package-lock.json", "{}");
    const base = sourceStamp(root);
    expect(sourceStamp(root)).toBe(base);

    write("shared/money.test.ts", "test");
    write("workers/embed/client-assets.generated.ts", "export const x = 1;");
    write("workers/local/dev.ts", "tooling");
    write("bench/run.ts", "bench");
    expect(sourceStamp(root)).toBe(base);

    write("shared/money.ts", "export const a = 2;");
    const changed = sourceStamp(root);
    expect(changed).not.toBe(base);
    write("workers/cron/wrangler.toml", 'name = "x"');
    expect(sourceStamp(root)).not.toBe(changed);
    const withConfig = sourceStamp(root);
    write("package-lock.json", '{"lockfileVersion":3}');
    expect(sourceStamp(root)).not.toBe(withConfig);
  });

  test("a file moved is a change, even with the same contents", () => {
    write("db/a.ts", "same");
    const before = sourceStamp(root);
    rmSync(join(root, "db/a.ts"));
    write("db/b.ts", "same");
    expect(sourceStamp(root)).not.toBe(before);
  });
});

describe("a test's bundles are copied from dist when dist was built from the same sources", () => {
  const bundles = (dir: string, text: string) => {
    for (const w of bundledWorkers(dir)) {
      mkdirSync(dirname(w.scriptPath), { recursive: true });
      writeFileSync(w.scriptPath, text);
    }
  };
  test("same stamp: copied, with the stamp; another stamp or a missing bundle: not copied", async () => {
    const dist = join(root, "copy-dist");
    const out = join(root, "copy-out");
    bundles(dist, "// bundle of stamp A");
    writeFileSync(join(dist, "build-stamp"), "stamp-A");
    expect(await copiedBundles(dist, out, "stamp-B")).toBe(false);
    expect(await copiedBundles(dist, out, "stamp-A")).toBe(true);
    for (const w of bundledWorkers(out)) expect(readFileSync(w.scriptPath, "utf8")).toBe("// bundle of stamp A");
    expect(readFileSync(join(out, "build-stamp"), "utf8")).toBe("stamp-A");
    rmSync(bundledWorkers(dist)[0]!.scriptPath);
    expect(await copiedBundles(dist, join(root, "copy-out-2"), "stamp-A")).toBe(false);
    // Never onto itself.
    expect(await copiedBundles(dist, dist, "stamp-A")).toBe(false);
  });
});
