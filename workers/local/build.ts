import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { REPO_ROOT, WORKERS, type WorkerKey } from "./wrangler-config.ts";

export type BuiltWorker = { key: WorkerKey; config: string; scriptPath: string };
/** `reused`: the bundles were already built from the same sources (no wrangler run). */
export type Build = { outDir: string; workers: BuiltWorker[]; durationMs: number; reused: boolean };

/**
 * Wrangler without the network: no usage metrics, no error reports, no banner
 * (whose update check would reach the npm registry). A config with a key
 * wrangler does not know still makes it look for a newer version, at the
 * registry `npm_registry` names (its update-check reads npm's rc with the
 * `npm_` prefix, not `npm_config_`): a port that refuses at once.
 */
export const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  WRANGLER_HIDE_BANNER: "true",
  npm_registry: "http://127.0.0.1:9/",
};

const builds = new Map<string, Promise<Build>>();

/**
 * Bundles the four workers exactly as `wrangler deploy` would upload them
 * (`--dry-run --outdir <outDir>/<worker>`), in parallel. Cached per process
 * and output directory, so tests and the bench pay for it once.
 *
 * @example const { workers } = await buildWorkers(); // dist/api/index.js, dist/embed/index.js, …
 */
export function buildWorkers(outDir = "dist"): Promise<Build> {
  const absolute = resolve(REPO_ROOT, outDir);
  let build = builds.get(absolute);
  if (!build) {
    build = runBuild(absolute);
    builds.set(absolute, build);
    build.catch(() => builds.delete(absolute));
  }
  return build;
}

/** Where each worker's bundle is (or will be) in `outDir`, without building. */
export function bundledWorkers(outDir = "dist"): BuiltWorker[] {
  const absolute = resolve(REPO_ROOT, outDir);
  return WORKERS.map(({ key, config }) => ({ key, config, scriptPath: join(absolute, key, "index.js") }));
}

/** What the bundles are built from: the code the workers import, their configs and the locked dependencies. */
const SOURCE_DIRS = ["workers/api", "workers/embed", "workers/cron", "workers/webhooks", "shared", "db"];
const SOURCE_FILES = ["package-lock.json", "tsconfig.json", "wrangler.toml"];
const STAMP = "build-stamp";

/**
 * A hash of everything the bundles are built from (tests, and files a build
 * step generates, left out): equal stamps mean equal bundles. Reading and
 * hashing the ~800 files takes tens of milliseconds; a build, 20 s of CPU.
 */
export function sourceStamp(root = REPO_ROOT): string {
  const hash = createHash("sha256");
  const files: string[] = SOURCE_FILES.map((f) => join(root, f));
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(path);
      } else if (!entry.name.includes(".test.") && !entry.name.includes(".generated.")) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) walk(join(root, dir));
  for (const file of files.sort()) {
    if (!existsSync(file)) continue;
    hash.update(relative(root, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

const stampOf = (outDir: string): string | null => {
  const path = join(outDir, STAMP);
  return existsSync(path) ? readFileSync(path, "utf8").trim() : null;
};
const complete = (outDir: string) => bundledWorkers(outDir).every((w) => existsSync(w.scriptPath));

/**
 * Builds the bundles into `outDir`, unless they are there already from the
 * same sources (its stamp): so `npm run dev` after `npm run build` (or after
 * another `npm run dev`) starts at once.
 *
 * The tests build into a folder of their own (workers/local/integration.ts):
 * when `dist` holds bundles of the same sources (CI builds it just before the
 * tests), they are copied from there instead of built again (about 20 s).
 * The stamp is read again after the copy, so a rebuild of `dist` that began
 * meanwhile (`npm run dev`) is not taken half-written.
 */
async function runBuild(outDir: string): Promise<Build> {
  const started = performance.now();
  const workers = bundledWorkers(outDir);
  const stamp = sourceStamp();
  const took = () => Math.round(performance.now() - started);
  if (stampOf(outDir) === stamp && complete(outDir)) return { outDir, workers, durationMs: took(), reused: true };
  await rm(join(outDir, STAMP), { force: true });
  if (await copiedBundles(resolve(REPO_ROOT, "dist"), outDir, stamp)) return { outDir, workers, durationMs: took(), reused: true };
  await Promise.all(
    workers.map(async ({ config, scriptPath }) => {
      const workerOut = dirname(scriptPath);
      await rm(workerOut, { recursive: true, force: true });
      const output = await wrangler(["deploy", "--dry-run", "--outdir", workerOut, "--config", config]);
      // The deploy check (workers/local/deploy-check.ts) fails on any warning in it, without a second dry run.
      await writeFile(join(workerOut, "wrangler-output.txt"), output);
    }),
  );
  // Written last: a build that failed half-way leaves no stamp, so the next one starts over.
  await writeFile(join(outDir, STAMP), stamp);
  return { outDir, workers, durationMs: took(), reused: false };
}

/** Copies the bundles of `dist` into `outDir` when they were built from the sources of `stamp`; false when they were not. */
export async function copiedBundles(dist: string, outDir: string, stamp: string): Promise<boolean> {
  if (resolve(REPO_ROOT, outDir) === resolve(REPO_ROOT, dist) || stampOf(dist) !== stamp || !complete(dist)) return false;
  await Promise.all(
    bundledWorkers(outDir).map(async ({ scriptPath }) => {
      const workerOut = dirname(scriptPath);
      await rm(workerOut, { recursive: true, force: true });
      await cp(join(dist, basename(workerOut)), workerOut, { recursive: true });
    }),
  );
  if (stampOf(dist) !== stamp || !complete(outDir)) return false;
  await writeFile(join(outDir, STAMP), stamp);
  return true;
}

/** Runs wrangler; its stdout and stderr together. */
async function wrangler(args: string[]): Promise<string> {
  const proc = Bun.spawn([join(REPO_ROOT, "node_modules", ".bin", "wrangler"), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...OFFLINE_ENV },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`wrangler ${args.join(" ")} failed (exit ${code}):\n${stdout}\n${stderr}`);
  return `${stdout}\n${stderr}`;
}

if (import.meta.main) {
  const { outDir, workers, durationMs, reused } = await buildWorkers(process.argv[2] ?? "dist");
  for (const w of workers) console.log(`built ${w.key.padEnd(8)} ${w.scriptPath}`);
  console.log(
    `${reused ? "reused" : "built"} ${workers.length} workers in ${outDir} in ${durationMs} ms${reused ? " (same sources as their build-stamp)" : ""}`,
  );
  const { WIDGET_SCRIPT } = await import("../embed/pages/widget-script.ts");
  const bytes = new TextEncoder().encode(WIDGET_SCRIPT);
  console.log(`widget.js: ${bytes.length} bytes, ${Bun.gzipSync(bytes).length} bytes gzipped (budget 5120)`);
  // The embed worker's build step has just written it; this reads the same output back (nothing is rewritten).
  const { buildClient } = await import("../embed/build-client.ts");
  const app = await buildClient();
  for (const f of app.files) console.log(`widget app ${f.name === app.entry ? "entry" : "chunk"} ${f.name}: ${f.bytes} bytes, ${f.gzip} bytes gzipped`);
}
