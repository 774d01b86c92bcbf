import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sourceStamp } from "./build.ts";

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
