import { basename } from "node:path";

/** One bundled browser app: its entry module's name and every output file by name. */
export interface BrowserBundle {
  entry: string;
  files: Record<string, string>;
}

/** A file of a bundle with its size as served: raw and gzipped. */
export interface BundledFileSize {
  name: string;
  bytes: number;
  gzip: number;
}

/**
 * Bundles a browser app with Bun's bundler: ESM, code split, minified, every
 * output named by its content hash (`<entryPrefix>-[hash]` for the entry,
 * `chunk-[hash]` for the lazily loaded chunks) so the worker serving them can
 * cache them for good. Build tooling only (the widget app, the dashboard app).
 *
 * @example const { entry, files } = await bundleBrowserApp(join(HERE, "client", "main.ts"), "app", "the widget app")
 */
export async function bundleBrowserApp(entrypoint: string, entryPrefix: string, what: string): Promise<BrowserBundle> {
  const result = await Bun.build({
    entrypoints: [entrypoint],
    target: "browser",
    format: "esm",
    splitting: true,
    minify: true,
    naming: { entry: `${entryPrefix}-[hash].[ext]`, chunk: "chunk-[hash].[ext]" },
  });
  if (!result.success) throw new AggregateError(result.logs, `${what} did not build`);
  const files: Record<string, string> = {};
  let entry = "";
  for (const output of result.outputs) {
    const name = basename(output.path);
    files[name] = await output.text();
    if (output.kind === "entry-point") entry = name;
  }
  return { entry, files };
}

/** Each file's size, raw and gzipped, for the build's report. */
export function bundledFileSizes(files: Record<string, string>): BundledFileSize[] {
  return Object.entries(files).map(([name, text]) => ({ name, bytes: text.length, gzip: Bun.gzipSync(text).length }));
}
