import { readFile, rename, writeFile } from "node:fs/promises";

/**
 * Writes a generated module only when its content changed, through a
 * temporary file renamed into place: test processes, `npm run dev` and
 * wrangler's build steps that generate the same file side by side never read
 * a half-written one, and an unchanged file keeps its mtime (no rebuilds).
 * Build tooling only (the widget app, the docs assets, the dashboard app).
 *
 * @example const changed = await writeGenerated(GENERATED, source)
 */
export async function writeGenerated(path: string, source: string): Promise<boolean> {
  const before = await readFile(path, "utf8").catch(() => null);
  if (before === source) return false;
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, source);
  await rename(tmp, path);
  return true;
}
